#!/usr/bin/python3
# SPDX-License-Identifier: MPL-2.0
# github_scenario.py - writes a fake-upstream scenario (README.md, "GitHub and Bugzilla") for a
# dask-like GitHub project: a week of GitHub Actions runs of dask/distributed's test workflow
# on pull requests (some from forks, which GitHub lists without a pull request number, and
# one merged since, listed without one too: all are in "pulls" to be looked up), on main, with re-run attempts after red runs, a cancelled run, an expired artifact, a run that
# uploaded no test report and one whose report is cut short, and a test flaky on Windows
# only. Each attempt uploads one JUnit
# artifact per platform, in the shape pytest --junitxml writes (test names like
# distributed/tests/test_worker.py::test_...). Deterministic for a given --seed and --now.
#
#   github_scenario.py [--now ISO-8601] [--days 7] [--seed 21] [--token T] > scenario.json
import argparse
import calendar
import json
import random
import sys
import time
from xml.sax.saxutils import escape, quoteattr

REPO = "dask/distributed"
FORK = "alice-dev/distributed"
PLATFORMS = ["ubuntu-latest-3.11", "windows-latest-3.10"]
FILES = {
    "distributed/tests/test_worker.py": ["test_worker_bad_args", "test_worker_reconnects",
                                         "test_close_gracefully", "test_worker_task_data",
                                         "test_spill_to_disk", "test_heartbeats"],
    "distributed/tests/test_client.py": ["test_submit", "test_map", "test_gather_timeout",
                                         "test_scatter", "test_cancel", "test_futures_of"],
    "distributed/tests/test_scheduler.py": ["test_administration", "test_stress_scatter_death",
                                            "test_rebalance", "test_retire_workers",
                                            "test_idle_timeout"],
    "distributed/tests/test_nanny.py": ["test_nanny_process_failure", "test_nanny_closes_cleanly",
                                        "test_nanny_restart"],
    "distributed/tests/test_utils.py": ["test_sync", "test_is_kernel", "test_parse_bytes"],
}
# test -> (chance of failing on a run, message)
FLAKY = {
    "distributed/tests/test_worker.py::test_worker_reconnects": (
        0.22, "asyncio.exceptions.TimeoutError: Worker did not reconnect within 5s\n"
              "distributed/tests/test_worker.py:1412: TimeoutError"),
    "distributed/tests/test_client.py::test_gather_timeout": (
        0.12, "asyncio.exceptions.TimeoutError: took 5001ms"),
    "distributed/tests/test_scheduler.py::test_stress_scatter_death": (
        0.10, "AssertionError: assert 'erred' == 'memory'\n  - memory\n  + erred"),
}
# flaky on Windows only (its own random stream, so the other draws stay as they were)
WINDOWS_ONLY = ("distributed/tests/test_nanny.py::test_nanny_restart", 0.3,
                "PermissionError: [WinError 32] The process cannot access the file because it is "
                "being used by another process")
MAIN_ONCE = "distributed/tests/test_nanny.py::test_nanny_closes_cleanly"
BROKEN_IN_PR = (31, "distributed/tests/test_utils.py::test_parse_bytes",
                "ValueError: Could not interpret '5 foos' as a byte unit")


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def junit(results, timestamp):
    """results: [(file, name, failure message or None)]"""
    failures = sum(1 for r in results if r[2])
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           '<testsuites><testsuite name="pytest" errors="0" failures="%d" skipped="0" tests="%d"'
           ' time="312.5" timestamp="%s" hostname="fv-az101-7">' % (failures, len(results),
                                                                    timestamp[:19])]
    for path, name, message in results:
        head = "<testcase classname=%s name=%s time=\"0.%03d\"" % (
            quoteattr(path), quoteattr(name), len(name) * 7 % 1000)
        if message:
            first = message.split("\n")[0]
            out.append("%s><failure message=%s>%s</failure></testcase>" % (
                head, quoteattr(first), escape(message)))
        else:
            out.append(head + " />")
    out.append("</testsuite></testsuites>")
    return "\n".join(out)


def attempt_results(rng, *, pr, main, first_main_run, platform="", windows_rng=None):
    results = []
    for path, names in FILES.items():
        for name in names:
            test = "%s::%s" % (path, name)
            message = None
            if test in FLAKY and rng.random() < FLAKY[test][0]:
                message = FLAKY[test][1]
            if main and first_main_run and test == MAIN_ONCE:
                message = "AssertionError: nanny process still alive after close()"
            if (windows_rng and platform.startswith("windows") and test == WINDOWS_ONLY[0]
                    and windows_rng.random() < WINDOWS_ONLY[1]):
                message = WINDOWS_ONLY[2]
            if pr == BROKEN_IN_PR[0] and test == BROKEN_IN_PR[1]:
                message = BROKEN_IN_PR[2]
            results.append((path, name, message))
    return results


def build(now, days, seed, token):
    rng = random.Random(seed)
    windows_rng = random.Random(seed + 1)
    start = now - days * 86400
    runs = []
    run_id = 9100000000
    state = {"first_main": True}

    def add(created, branch, sha, *, pr=None, fork=False, event=None, special=None):
        nonlocal run_id
        run_id += rng.randint(3, 40)
        attempts = []
        for n in (1, 2):
            started = created + (n - 1) * 5400
            main = pr is None and not fork and branch == "main"
            red = False
            artifacts = []
            for platform in PLATFORMS:
                results = attempt_results(rng, pr=pr, main=main,
                                          first_main_run=state["first_main"] and platform == PLATFORMS[0],
                                          platform=platform, windows_rng=windows_rng)
                red = red or any(r[2] for r in results)
                text = junit(results, iso(started + 600))
                artifacts.append({"name": "test-results-%s%s" % (platform, "" if n == 1 else "-attempt%d" % n),
                                  "files": {"reports/pytest.xml": text},
                                  "created_at": iso(started + 900)})
            if main:
                state["first_main"] = False
            conclusion = "failure" if red else "success"
            if special == "cancelled" and n == 1:
                conclusion, artifacts = "cancelled", []
            if special == "expired":
                artifacts[1]["expired"] = True
            if special == "no-artifact":
                artifacts = []
            if special == "truncated":
                artifacts[0]["files"]["reports/pytest.xml"] = artifacts[0]["files"]["reports/pytest.xml"][:700]
            attempts.append({"conclusion": conclusion, "run_started_at": iso(started),
                             "artifacts": artifacts})
            # a red run of a pull request is re-run once (a retrigger), as maintainers do
            if not (red and pr is not None and n == 1) and special != "cancelled":
                break
        runs.append({"repo": REPO, "id": run_id, "head_branch": branch, "head_sha": sha,
                     "head_repository": FORK if fork else REPO,
                     "pull_requests": [pr] if pr is not None and not fork else [],
                     "event": event or ("pull_request" if pr is not None else "push"),
                     "created_at": iso(created), "attempts": attempts,
                     "title": "PR #%d" % pr if pr else "main"})

    # main: two pushes a day
    for d in range(days):
        for h in (9, 17):
            t = start + d * 86400 + h * 3600
            add(t, "main", "%040x" % rng.getrandbits(160))
    # pull requests: 14 over the week, 1 to 3 pushes each; 3 from a fork
    for i in range(14):
        pr = 20 + i
        fork = i in (3, 8, 11)
        opened = start + rng.randint(0, days * 86400 - 6 * 3600)
        branch = "fix-%d" % pr if not fork else "patch-%d" % i
        for push in range(rng.randint(1, 3)):
            special = {(1, 0): "expired", (5, 0): "cancelled", (7, 1): "no-artifact",
                       (9, 0): "truncated"}.get((i, push))
            t = opened + push * 7200
            if t < now - 3600:
                add(t, branch, "%040x" % rng.getrandbits(160), pr=pr, fork=fork, special=special)
    runs.sort(key=lambda r: r["created_at"])
    # GitHub lists no pull request for a fork's runs nor for a merged one's: collect-github
    # looks them up (GET /pulls?head=OWNER:BRANCH&state=all), so they are here as pull
    # requests; the last pull request of the repository's own branches was merged since.
    pulls = {}
    own = [r for r in runs if r["pull_requests"]]
    merged = own[-1]["pull_requests"][0] if own else None
    for r in runs:
        if r["head_repository"] == FORK or (merged and r["pull_requests"] == [merged]):
            number = int(r["title"].split("#")[1])
            pulls[number] = {"repo": REPO, "number": number, "head_repository": r["head_repository"],
                             "head_branch": r["head_branch"], "head_sha": r["head_sha"],
                             "state": "closed" if number == merged else "open",
                             "merged": number == merged,
                             "author_association": "CONTRIBUTOR" if r["head_repository"] == FORK
                             else "MEMBER",
                             "created_at": iso(calendar.timegm(time.strptime(r["created_at"],
                                                                             "%Y-%m-%dT%H:%M:%SZ")) - 600)
                             if number not in pulls else pulls[number]["created_at"]}
    for r in runs:
        if merged and r["pull_requests"] == [merged]:
            r["pull_requests"] = []
    github = {"repos": {REPO: {"default_branch": "main"}}, "runs": runs,
              "pulls": [pulls[n] for n in sorted(pulls)],
              "rate_limit": {"limit": 5000, "remaining": 5000, "reset_s": 3600}}
    if token:
        github["token"] = token
    return {"github": github}


def main():
    parser = argparse.ArgumentParser(description="a dask-like GitHub scenario for the fake upstream")
    parser.add_argument("--now")
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--token")
    args = parser.parse_args()
    now = calendar.timegm(time.strptime(args.now[:19], "%Y-%m-%dT%H:%M:%S")) if args.now else int(time.time())
    json.dump(build(now, args.days, args.seed, args.token), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
