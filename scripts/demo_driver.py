#!/usr/bin/python3
# SPDX-License-Identifier: MPL-2.0
"""demo_driver.py - plays Taskcluster's and Treeherder's part in the local demo.

It registers, in the fake upstream, failing test tasks made from the recorded fixtures
(each with its own label on the recorded autoland push), publishes their Pulse messages
and the recorded passes and exceptions through `retrig publish`, and then does what
Taskcluster would do when retrig-retrigger calls the retrigger hook: it creates the
requested runs, registers their Treeherder jobs and bug_suggestions, and publishes their
task-completed or task-failed messages. It prints progress until every failure has a
verdict, then the decisions table and the pooled verdicts (decide_policy = pooled: one
verdict per failing test per push, from every configuration's runs), with `retrig explain`
of the regression. The regression is on autoland, so retrig-decide searches its culprit:
the fake's push history (below) has its labels skipped on the three pushes before and
passing on the fourth; the pushes from the culprit (N-2) on fail the runs add-new-jobs
makes there, and the demo waits until the culprit is named.

Scenarios (what happens):
  regression    one test (browser_resizeVideo.js) fails on two configurations of the push,
                android-em-7-0-x86_64/debug and linux1804-64-qr/opt: one pooled set, one
                verdict; the failure reproduces in every retrigger asked for
  intermittent  another test (browser_fullscreen.js, a known flake in the seeded history)
                fails on one configuration and passes on the push's other one; one retrigger
                of five reproduces it if any is asked for, the others pass
  infra         the errorsummary shows a harness timeout: no retrigger

The recorded errorsummary's first failing test is browser_fullscreen.js; the regression's
runs serve it with that test renamed browser_resizeVideo.js (another test of the same
manifest), so that the two scenarios are two tests. Each failing run's Treeherder bug
suggestions are the recorded ones with, first, the line of its errorsummary's first failure
(Treeherder lists every failure line of a log; the recorded suggestions come from another
job), so that the retriggers' lines name the pooled test.
"""
import argparse
import hashlib
import json
import os
import random
import string
import subprocess
import sys
import time
import urllib.request

PROJECT, REVISION, PUSH = "autoland", "b437ae030825a8ea9fa7a632b1fcb9becbe11f69", "88560"
GROUP = "HkX-TbGXQaSX4ucqGMQNBA"  # the push's decision task in the recorded fixtures
ROUTE = "route.tc-treeherder.v2.%s.%s.%s" % (PROJECT, REVISION, PUSH)
EXCHANGE = "exchange/taskcluster-queue/v1/"
BASE_LABEL = "test-android-em-7.0-x86_64/debug-mochitest-e10s-"
ES_FAIL = "errorsummary/mochitest-browser-chrome_errorsummary.log"
ES_PASS = "errorsummary/mochitest-browser-chrome_pass_errorsummary.log"
ES_INFRA = "errorsummary/mochitest-browser-chrome_infra_errorsummary.log"
# The regression's test: the recorded first failure renamed (see above).
RENAMED = {"browser_fullscreen.js": "browser_resizeVideo.js"}
# The second configuration of the push: the recorded definition on another platform, opt.
LINUX = "linux1804-64-qr"
# (kind, label, errorsummary, replace, platform): platform None is the recording's.
SCENARIOS = [
    ("regression", BASE_LABEL + "1", ES_FAIL, RENAMED, None),
    ("regression", "test-%s/opt-mochitest-browser-chrome-e10s-1" % LINUX, ES_FAIL, RENAMED, LINUX),
    ("intermittent", BASE_LABEL + "2", ES_FAIL, {}, None),
    ("infra", BASE_LABEL + "3", ES_INFRA, {}, None),
]


# The push history before the failing push (Treeherder push ids; the fake's pushlog ids are
# the same): the regression's label passed on N-4, was skipped on N-3 .. N-1; N-2 broke it.
HISTORY = [(int(PUSH) - k, hashlib.sha1(b"demo push %d" % k).hexdigest()) for k in range(1, 7)]
CULPRIT_BACK = 2
PASSED_BACK = 4


def slugid():
    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(21)) + "A"


class Demo:
    def __init__(self, args):
        self.args = args
        self.fixtures = args.fixtures
        self.job_id = 500000 + random.randrange(100000)
        self.handled_triggers = 0
        self.work = args.workdir
        os.makedirs(self.work, exist_ok=True)
        with open(os.path.join(self.fixtures, "pulse",
                               "treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json")) as f:
            self.message = json.load(f)["payload"]

    def control(self, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.args.fake + path, data=data,
                                     method="POST" if data else "GET",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def publish(self, event, body, cc=True, name="msg"):
        path = os.path.join(self.work, "%s-%s.json" % (name, slugid()))
        with open(path, "w") as f:
            json.dump(body, f)
        cmd = [os.path.join(self.args.bin, "retrig"), "--config", self.args.config, "publish",
               "--exchange", EXCHANGE + event]
        if cc:
            cmd += ["--cc", ROUTE]
        subprocess.run(cmd + [path], check=True)
        os.unlink(path)

    def run_message(self, task_id, state, label=None):
        m = json.loads(json.dumps(self.message))
        m["status"]["taskId"] = task_id
        m["status"]["state"] = state
        now = time.time()
        for run in m["status"]["runs"]:
            run["state"] = state
            run["reasonResolved"] = state
            # A replay happens now: the run's times are the replay's.
            for key, ago in (("scheduled", 900), ("started", 600), ("resolved", 0)):
                run[key] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now - ago))
        if label:
            m["task"] = {"tags": {"label": label, "kind": "test"}}
        return m

    def definition(self, label, platform):
        """The recorded test task's definition with the label, on platform (opt) if given."""
        with open(os.path.join(self.fixtures, "taskcluster",
                               "task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json")) as f:
            d = json.load(f)
        d["tags"] = {"label": label, "kind": "test"}
        if platform:
            th = d["extra"]["treeherder"]
            th["machine"]["platform"] = platform
            th["collection"] = {"opt": True}
            d["extra"]["treeherder-platform"] = platform + "/opt"
        return d

    def suggestions(self, errorsummary, replace):
        """The recorded bug suggestions, after the line of the errorsummary's first failure."""
        with open(os.path.join(self.fixtures, errorsummary)) as f:
            text = f.read()
        for old, new in sorted(replace.items()):
            text = text.replace(old, new)
        first = next((r for r in map(json.loads, text.splitlines())
                      if r.get("action") == "test_result" and r.get("test")), None)
        with open(os.path.join(self.fixtures, "treeherder", "bug_suggestions.json")) as f:
            recorded = json.load(f)
        if not first:
            return recorded
        search = "TEST-UNEXPECTED-%s | %s | %s - %s" % (first["status"], first["test"],
                                                        first.get("subtest") or "",
                                                        first.get("message") or "")
        return [{"search": search.rstrip(" -"), "search_terms": [first["test"].rsplit("/", 1)[-1]],
                 "path_end": first["test"], "bugs": {"open_recent": [], "all_others": []}}] + recorded

    def register_task(self, task_id, label, errorsummary, replace, platform, fails):
        self.job_id += 1
        artifact = {"name": "public/test_info/mochitest_errorsummary.log", "fixture": errorsummary}
        if replace:
            artifact["replace"] = replace
        scenario = {
            "tasks": {task_id: self.definition(label, platform)},
            "artifacts": {task_id: {"0": [artifact,
                                          {"name": "public/logs/live_backing.log", "content": "log"}]}},
            "jobs": {task_id: [{"id": self.job_id, "retry_id": 0,
                                "result": "testfailed" if fails else "success"}]},
            "job_logs": {str(self.job_id): "parsed"},
            "bug_suggestions": {str(self.job_id): self.suggestions(errorsummary, replace)
                                if fails else []},
        }
        self.control("/_control/scenario", scenario)

    def start(self):
        self.control("/_control/scenario", {
            "tasks": {GROUP: {"fixture": "taskcluster/task_definition_build-android-api-16-debug.json",
                              "override": {"taskGroupId": GROUP}}},
            # The recorded actions.json (push f7Jj_h6MTEKr5Ln_7aFqbw, revision c7766d0b) moved
            # to our push: retrig calls only the hooks of the task's own push.
            "artifacts": {GROUP: {"0": [{"name": "public/actions.json",
                                         "fixture": "taskcluster/actions.json",
                                         "replace": {"f7Jj_h6MTEKr5Ln_7aFqbw": GROUP,
                                                     "c7766d0b4a121985a8b07e6721d66ccab57bbf76":
                                                     REVISION}}]}},
            "hook_clients": {self.args.client_id: self.args.access_token},
        })
        self.push_history()
        # The recorded passes and exceptions, as they were published.
        for name, event in [("treeherder_task-completed_B3EheQ-IQ5aPzw34KS_a6g.json", "task-completed"),
                            ("fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json", "task-completed"),
                            ("fuzzmanager_task-exception_f8fRfedPSp2-A7M9Zhxe-Q.json", "task-exception")]:
            with open(os.path.join(self.fixtures, "pulse", name)) as f:
                self.publish(event, json.load(f), cc=False, name="recorded")
        # One failing original per scenario.
        self.originals = {}
        for kind, label, errorsummary, replace, platform in SCENARIOS:
            task_id = slugid()
            self.originals[label] = (kind, task_id, replace, platform)
            self.register_task(task_id, label, errorsummary, replace, platform, True)
            self.publish("task-failed", self.run_message(task_id, "failed"), name="failed")
            print("  failure seen:   %-12s %s (task %s)" % (kind, label, task_id))

    def push_history(self):
        """Autoland's pushes before ours, each with its indexed decision task and actions.json,
        as retrig-decide's culprit search and add-new-jobs find them."""
        regressions = [label for kind, label, _, _, _ in SCENARIOS if kind == "regression"]
        scenario = {"pushes": {PROJECT: [{"id": int(PUSH), "revision": REVISION,
                                          "author": "sheriffed@example.com"}]},
                    "tasks": {}, "artifacts": {}, "index": {}, "add_new_jobs": {},
                    "jobs": {slugid(): [{"id": self.job_id + 90000 + n, "result": "success",
                                         "state": "completed", "job_type_name": label,
                                         "push_id": int(PUSH) - PASSED_BACK}]
                             for n, label in enumerate(regressions)}}
        for back, (push_id, revision) in enumerate(HISTORY, start=1):
            scenario["pushes"][PROJECT].append({"id": push_id, "revision": revision,
                                                "author": "pusher%d@example.com" % back})
            decision = slugid()
            scenario["tasks"][decision] = {
                "taskGroupId": decision, "provisionerId": "gecko-3", "workerType": "decision",
                "schedulerId": "gecko-level-3", "created": "2024-05-01T10:00:00.000Z",
                "routes": ["tc-treeherder.v2.%s.%s.%d" % (PROJECT, revision, push_id)],
                "metadata": {"name": "Gecko Decision Task"}, "tags": {"kind": "decision-task"}}
            scenario["artifacts"][decision] = {"0": [{
                "name": "public/actions.json", "fixture": "taskcluster/actions.json",
                "replace": {"f7Jj_h6MTEKr5Ln_7aFqbw": decision,
                            "c7766d0b4a121985a8b07e6721d66ccab57bbf76": revision}}]}
            scenario["index"]["gecko.v2.%s.revision.%s.taskgraph" % (PROJECT, revision)] = [
                {"name": "decision", "taskId": decision}]
            scenario["add_new_jobs"][revision] = "testfailed" if back <= CULPRIT_BACK else "success"
        self.control("/_control/scenario", scenario)

    def play_triggers(self):
        """Runs the retriggers of every new hook call, as Taskcluster would."""
        triggers = self.control("/_control/triggers")
        for trigger in triggers[self.handled_triggers:]:
            self.handled_triggers += 1
            for request in trigger["payload"]["user"]["input"].get("requests", []):
                for label in request["tasks"]:
                    kind, _, replace, platform = self.originals.get(label,
                                                                    ("unknown", None, {}, None))
                    times = request.get("times", 1)
                    print("  retriggered:    %-12s %s x%d (action task %s)"
                          % (kind, label, times, trigger["taskId"]))
                    for n in range(times):
                        task_id = slugid()
                        fails = kind == "regression" or (kind == "intermittent" and n == 0)
                        self.register_task(task_id, label, ES_FAIL if fails else ES_PASS,
                                           replace if fails else {}, platform, fails)
                        state = "failed" if fails else "completed"
                        self.publish("task-" + state, self.run_message(task_id, state, label),
                                     name="retrigger")

    def query(self, sql):
        out = subprocess.run(["psql", self.args.database_url, "-At", "-F", "\t", "-c", sql],
                             check=True, capture_output=True, text=True)
        return [line.split("\t") for line in out.stdout.splitlines() if line]

    def wait(self):
        deadline = time.time() + self.args.timeout
        expected = sum(1 for kind, _, _, _, _ in SCENARIOS if kind != "infra")
        last = None
        while time.time() < deadline:
            self.play_triggers()
            sets = int(self.query("SELECT count(*) FROM retrigger_sets")[0][0])
            decided = int(self.query("SELECT count(*) FROM decisions")[0][0])
            infra = int(self.query("SELECT count(*) FROM runs WHERE verdict = 'infra'")[0][0])
            status = (sets, self.handled_triggers, decided, infra)
            if status != last:
                print("  progress: %d sets, %d retrigger actions, %d decisions, %d infra failures"
                      % status)
                last = status
            searching = int(self.query(
                "SELECT count(*) FROM decisions WHERE culprit_status = 'searching'")[0][0])
            pooling = int(self.query(
                "SELECT count(*) FROM pooled_sets WHERE state <> 'decided'")[0][0])
            if decided >= expected and infra >= 1 and not searching and not pooling:
                return True
            time.sleep(0.5)
        return False

    def report(self):
        rows = self.query(
            "SELECT d.verdict, s.original_task_id, s.label, d.reason,"
            " coalesce((SELECT count(*) || ' lines, most reproduced by ' || max((l->>'reproduced')::int)"
            "           || ' of ' || (SELECT count(*) FROM retrigger_set_members m"
            "                         WHERE m.set_id = s.id AND m.role = 'retrigger')"
            "           FROM jsonb_array_elements(d.evidence->'lines') l), '')"
            " FROM decisions d JOIN retrigger_sets s ON s.id = d.set_id ORDER BY s.label")
        rows += [["infra", r[0], r[1], r[2], "-"] for r in self.query(
            "SELECT task_id, label, verdict_reason FROM runs WHERE verdict = 'infra' ORDER BY label")]
        print()
        print("%-13s %-22s %-50s %-24s %s" % ("verdict", "task", "label", "reason", "lines reproduced"))
        for r in rows:
            print("%-13s %-22s %-50s %-24s %s" % tuple(r[:5]))
        for r in self.query(
                "SELECT s.label, d.culprit_status, d.culprit_reason, coalesce(d.culprit_revision, '-'),"
                " coalesce(d.culprit_author, '-'), jsonb_array_length(d.culprit_probes),"
                " d.culprit_jobs_spent FROM decisions d JOIN retrigger_sets s ON s.id = d.set_id"
                " WHERE d.culprit_status IS NOT NULL ORDER BY s.label"):
            print("\nculprit of the regression of %s: %s (%s) %s by %s; %s pushes probed, %s runs"
                  % tuple(r))
        self.report_pooled()

    def report_pooled(self):
        """One verdict per failing test of the push (decide_policy = pooled), each with every
        configuration's evidence; then `retrig explain` of a regression's task."""
        pools = self.query(
            "SELECT p.id, p.test, p.verdict, p.reason, to_char(p.p_regression, 'FM0.000'),"
            " p.rounds, p.retriggers, (SELECT count(*) FROM decisions d WHERE d.pool_id = p.id)"
            " FROM pooled_sets p ORDER BY p.id")
        print("\n== pooled verdicts (decide_policy = pooled: one per failing test per push)")
        for pool_id, test, verdict, reason, p, rounds, retriggers, decisions in pools:
            print("\npooled verdict: %s (%s), p_regression %s, %s round(s), %s retrigger(s), "
                  "%s task decision(s) point at it\n  test %s"
                  % (verdict, reason, p, rounds, retriggers, decisions, test))
            print("  %-32s %-8s %10s %10s" % ("config", "push run", "retriggers", "reproduced"))
            for c in self.query(
                    "SELECT c->>'config', c->>'push_run', c->>'retriggers', c->>'reproduced'"
                    " FROM pooled_sets p, jsonb_array_elements(p.evidence->'configs') c"
                    " WHERE p.id = %d ORDER BY c->>'config'" % int(pool_id)):
                print("  %-32s %-8s %10s %10s" % tuple(c))
        regression = next((task for kind, task, _, _ in self.originals.values()
                           if kind == "regression"), None)
        if regression:
            print("\n$ retrig explain %s   (a task of the pooled regression)" % regression)
            env = dict(os.environ, RETRIG_DATABASE_URL=self.args.database_url)
            out = subprocess.run([os.path.join(self.args.bin, "retrig"), "--config",
                                  self.args.config, "explain", regression],
                                 env=env, capture_output=True, text=True)
            print("\n".join("  " + line for line in (out.stdout + out.stderr).splitlines()))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fake", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--database-url", required=True)
    p.add_argument("--client-id", required=True)
    p.add_argument("--access-token", required=True)
    p.add_argument("--fixtures", default=os.path.join(here, "..", "tests", "fixtures"))
    p.add_argument("--workdir", default="/tmp/retrig-demo")
    p.add_argument("--timeout", type=float, default=180)
    args = p.parse_args()
    demo = Demo(args)
    print("== replaying recorded Pulse traffic")
    demo.start()
    print("== waiting for verdicts")
    ok = demo.wait()
    demo.report()
    if not ok:
        print("demo: not every failure got a verdict in %d s (see the worker logs)" % args.timeout)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
