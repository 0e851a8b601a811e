#!/usr/bin/python3
# SPDX-License-Identifier: MPL-2.0
"""demo_perf.py - the performance half of the local demo.

It replays the recorded Perfherder alert summaries (tests/fixtures/perfherder), re-dated to
the last few hours, through the fake upstream: each alert gets the recorded raptor task on
the recorded push's decision task group, a Treeherder job, and the recorded data points of
its series ending at the summary's push, produced by that job. It prints which alerts
`retrig perf-pick --explain` picks and why, runs `retrig-perf --once` in dry-run against the
fake (the backfills are recorded with their budget, nothing is sent), and prints what
retrig-perf recorded.

scripts/demo sets the perf_* keys in the environment (RETRIG_PERF_*): the recorded
summaries' frameworks, improvements too (after the regressions), and budgets small enough
that one family runs out, so that the sheriffs' page shows a limit reached. This script
adds dry_run for retrig-perf alone.
"""
import argparse
import json
import os
import random
import string
import subprocess
import sys
import time
import urllib.request

DECISION = "HkX-TbGXQaSX4ucqGMQNBA"  # the recorded push's decision task group
DECISION_FIXTURE = "taskcluster/task_definition_build-android-api-16-debug.json"
TASK_FIXTURE = "taskcluster/task_definition_B3EheQ-IQ5aPzw34KS_a6g.json"  # a raptor task
TASK_REVISION = "918d7c84da371bda26460fb4b50f161d32107880"  # its push (GECKO_HEAD_REV)
AGES_HOURS = [5.0, 3.5, 2.0]  # the summaries' ages, oldest first (older than perf_min_age_minutes)


def slugid():
    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(21)) + "A"


def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000", time.gmtime(seconds))


def control(fake, path, body):
    req = urllib.request.Request(fake + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"null")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fake", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--database-url", required=True)
    p.add_argument("--fixtures", default=os.path.join(here, "..", "tests", "fixtures"))
    p.add_argument("--workdir", required=True)
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    env = dict(os.environ, RETRIG_DRY_RUN="true")

    with open(os.path.join(args.fixtures, "perfherder", "alert_summaries.json")) as f:
        recorded = json.load(f)
    summaries = recorded["results"] if isinstance(recorded, dict) else recorded
    with open(os.path.join(args.fixtures, "perfherder", "sherlock_backfill_record_context.json")) as f:
        points = json.load(f)
    now = time.time()
    scenario = {
        "tasks": {DECISION: {"fixture": DECISION_FIXTURE, "override": {"taskGroupId": DECISION}}},
        # The recorded actions.json (push f7Jj_h6MTEKr5Ln_7aFqbw, revision c7766d0b) moved to
        # the raptor task's push: retrig calls only the hooks of the task's own push.
        "artifacts": {DECISION: {"0": [{"name": "public/actions.json",
                                        "fixture": "taskcluster/actions.json",
                                        "replace": {"f7Jj_h6MTEKr5Ln_7aFqbw": DECISION,
                                                    "c7766d0b4a121985a8b07e6721d66ccab57bbf76":
                                                    TASK_REVISION}}]}},
        "alert_summaries": [], "jobs": {}, "performance_data": [],
    }
    job_id = 800000
    ordered = sorted(summaries, key=lambda s: s["created"])
    for age, summary in zip(AGES_HOURS, ordered):
        summary["created"] = iso(now - age * 3600)
        scenario["alert_summaries"].append(summary)
        for alert in summary["alerts"]:
            job_id += 1
            task_id = slugid()
            signature = alert["series_signature"]
            scenario["tasks"][task_id] = {"fixture": TASK_FIXTURE,
                                          "override": {"taskGroupId": DECISION}}
            scenario["jobs"][task_id] = [{"id": job_id, "retry_id": 0}]
            series = json.loads(json.dumps(points))
            series[-1]["push_id"] = summary["push_id"]
            series[-1]["job_id"] = job_id
            scenario["performance_data"].append({
                "project": summary["repository"], "signature_id": signature["id"],
                "signature_hash": signature["signature_hash"], "data": series})
    path = os.path.join(args.workdir, "alert_summaries.json")
    with open(path, "w") as f:
        json.dump(ordered, f, indent=1)
    control(args.fake, "/_control/scenario", scenario)
    nalerts = sum(len(s["alerts"]) for s in ordered)
    print("  %d recorded alert summaries (%d alerts), re-dated to %s hours ago"
          % (len(ordered), nalerts, ", ".join("%g" % a for a in AGES_HOURS)))

    explained = subprocess.run([os.path.join(args.bin, "retrig"), "perf-pick", "--summaries", path,
                                "--explain"], env=env, capture_output=True, text=True)
    if explained.returncode != 0:
        print("demo: retrig perf-pick failed: %s" % explained.stderr.strip(), file=sys.stderr)
        return 1
    picks = json.loads(explained.stdout)
    print("  retrig perf-pick --explain (daily budgets: %s):"
          % os.environ.get("RETRIG_PERF_BUDGET_LIMITS", "the default perf_budget_limits"))
    for pick in picks["picked"]:
        print("    pick  alert %-7s %-28s %-8s %s" % (pick["alert_id"], pick["platform"],
                                                    pick["family"], pick["reason"]))
    for skip in picks["skipped"]:
        alert = "alert %s" % skip["alert_id"] if skip["alert_id"] else "summary %s" % skip["summary_id"]
        print("    skip  %-13s %s" % (alert, skip["reason"]))

    run = subprocess.run([os.path.join(args.bin, "retrig-perf"), "--once"], env=env,
                         capture_output=True, text=True, timeout=120)
    with open(os.path.join(args.workdir, "retrig-perf.log"), "w") as f:
        f.write(run.stderr)
    if run.returncode != 0:
        print("demo: retrig-perf --once exited %d (log: %s)"
              % (run.returncode, os.path.join(args.workdir, "retrig-perf.log")), file=sys.stderr)
        return 1
    rows = subprocess.run(
        ["psql", args.database_url, "-At", "-F", "\t", "-c",
         "SELECT alert_id, platform, family, coalesce(outcome, 'in flight'), jobs_scheduled"
         " FROM perf_alerts ORDER BY intent_at, alert_id"],
        check=True, capture_output=True, text=True).stdout.splitlines()
    print("  retrig-perf --once (dry run: recorded, budget spent, nothing sent):")
    for line in rows:
        alert, platform, family, outcome, jobs = line.split("\t")
        print("    alert %-7s %-28s %-8s %-9s %s jobs" % (alert, platform, family, outcome, jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
