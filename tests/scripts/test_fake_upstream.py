#!/usr/bin/python3
# SPDX-License-Identifier: MPL-2.0
# test_fake_upstream.py - the fake upstream serves the fixtures in the real API shapes,
# paginates, verifies Hawk, injects parse_pending and exits on SIGTERM; its GitHub part
# (github_fake.py) lists runs with Link pagination and ETags, counts the rate limit down,
# redirects artifact downloads to a storage path that refuses Authorization, answers 410
# for expired artifacts, keeps issues and comments; its Bugzilla part files and updates bugs.
import base64
import hashlib
import hmac
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("RT_TEST_SOURCE_DIR", os.path.join(HERE, "..", ".."))
FIXTURES = os.environ.get("RT_TEST_FIXTURES_DIR", os.path.join(SOURCE, "tests", "fixtures"))
SCRIPT = os.path.join(SOURCE, "tests", "fake-upstream", "fake_upstream.py")
HOOK = "/api/hooks/v1/hooks/project-gecko/in-tree-action-3-generic%2F9353e8f146/trigger"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


GH_TOKEN = "ghp_fake_upstream_test"
GH_AUTH = {"Authorization": "Bearer " + GH_TOKEN}


def gh_runs():
    """Three runs of o/r: a pull request re-run once, a fork's, a push to main."""
    xml = '<testsuites><testsuite name="pytest"><testcase classname="a.py" name="t"/></testsuite></testsuites>'
    return [
        {"repo": "o/r", "id": 11, "head_branch": "fix", "head_sha": "a" * 40, "pull_requests": [5],
         "created_at": "2024-05-01T10:00:00Z",
         "attempts": [{"conclusion": "failure", "artifacts": [{"name": "junit", "files": {"r.xml": xml}}]},
                      {"conclusion": "success", "artifacts": [{"name": "junit-2", "files": {"r.xml": xml},
                                                               "expired": True}]}]},
        {"repo": "o/r", "id": 12, "head_branch": "patch-1", "head_sha": "b" * 40,
         "head_repository": "eve/r", "event": "pull_request", "created_at": "2024-05-02T10:00:00Z"},
        {"repo": "o/r", "id": 13, "head_branch": "main", "head_sha": "c" * 40,
         "created_at": "2024-05-03T10:00:00Z"},
    ]


def fixture(relative):
    with open(os.path.join(FIXTURES, relative), "rb") as f:
        return json.loads(f.read())


class FakeUpstreamTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="retrig-fake-test-")
        port_file = os.path.join(cls.tmp, "port")
        cls.proc = subprocess.Popen([sys.executable, SCRIPT, "--port", "0", "--port-file",
                                     port_file, "--fixtures", FIXTURES, "--quiet"])
        deadline = time.time() + 20
        while not os.path.exists(port_file):
            if time.time() > deadline or cls.proc.poll() is not None:
                raise RuntimeError("the fake upstream did not start")
            time.sleep(0.02)
        with open(port_file) as f:
            cls.port = int(f.read())
        cls.base = "http://127.0.0.1:%d" % cls.port

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            cls.proc.kill()
            cls.proc.wait()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.call("POST", "/_control/reset", {})

    def call(self, method, path, body=None, headers=None, with_headers=False):
        data = None if body is None else json.dumps(body).encode()
        url = path if path.startswith("http") else self.base + path
        request = urllib.request.Request(url, data=data, method=method,
                                         headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        opener = urllib.request.build_opener(NoRedirect)
        try:
            with opener.open(request, timeout=10) as response:
                raw = response.read()
                status = response.status
                answer_headers = response.headers
        except urllib.error.HTTPError as e:
            raw, status, answer_headers = e.read(), e.code, e.headers
        if with_headers:
            try:
                return status, json.loads(raw), answer_headers
            except ValueError:
                return status, raw, answer_headers
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw

    def hawk(self, token, path, nonce, ts=None, client="project/retrig/py", ext=None):
        ts = int(time.time()) if ts is None else ts
        normalized = "hawk.1.header\n%d\n%s\nPOST\n%s\n127.0.0.1\n%d\n\n%s\n" % (
            ts, nonce, path, self.port, ext or "")
        mac = base64.b64encode(hmac.new(token.encode(), normalized.encode(),
                                        hashlib.sha256).digest()).decode()
        header = 'Hawk id="%s", ts="%d", nonce="%s", mac="%s"' % (client, ts, nonce, mac)
        if ext:
            header += ', ext="%s"' % ext
        return {"Authorization": header}

    def test_task_definition_and_status_come_from_the_fixtures(self):
        status, task = self.call("GET", "/api/queue/v1/task/GWxTc8p_RUa5_Xo4RtMiCA")
        self.assertEqual(status, 200)
        self.assertEqual(task, fixture("taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"))
        status, answer = self.call("GET", "/api/queue/v1/task/B3EheQ-IQ5aPzw34KS_a6g/status")
        pulse = fixture("pulse/treeherder_task-completed_B3EheQ-IQ5aPzw34KS_a6g.json")
        self.assertEqual(answer["status"], pulse["payload"]["status"])
        status, error = self.call("GET", "/api/queue/v1/task/AAAAAAAAAAAAAAAAAAAAAA")
        self.assertEqual(status, 404)
        self.assertEqual(error["code"], "ResourceNotFound")

    def test_artifact_list_is_paginated_with_continuation_tokens(self):
        task = "B3EheQ-IQ5aPzw34KS_a6g"
        names = ["public/test_info/a%d_errorsummary.log" % i for i in range(5)]
        self.call("POST", "/_control/scenario", {"artifacts": {task: {"0": [
            {"name": n, "fixture": "errorsummary/plain-chunked_errorsummary.log"}
            for n in names]}}})
        seen, token = [], None
        for _ in range(10):
            path = "/api/queue/v1/task/%s/runs/0/artifacts?limit=2" % task
            if token:
                path += "&continuationToken=" + urllib.request.quote(token)
            status, page = self.call("GET", path)
            self.assertEqual(status, 200)
            self.assertLessEqual(len(page["artifacts"]), 2)
            seen += [a["name"] for a in page["artifacts"]]
            token = page.get("continuationToken")
            if not token:
                break
        self.assertEqual(seen, names)
        with urllib.request.urlopen(self.base + "/api/queue/v1/task/%s/runs/0/artifacts/%s" % (
                task, names[3])) as response:
            body = response.read()
        with open(os.path.join(FIXTURES, "errorsummary/plain-chunked_errorsummary.log"), "rb") as f:
            self.assertEqual(body, f.read())

    def test_artifact_content_can_be_moved_to_another_push(self):
        task = "B3EheQ-IQ5aPzw34KS_a6g"
        self.call("POST", "/_control/scenario", {"artifacts": {task: {"0": [
            {"name": "public/actions.json", "fixture": "taskcluster/actions.json",
             "replace": {"f7Jj_h6MTEKr5Ln_7aFqbw": task,
                         "c7766d0b4a121985a8b07e6721d66ccab57bbf76": "b" * 40}}]}}})
        status, actions = self.call("GET", "/api/queue/v1/task/%s/artifacts/public/actions.json"
                                    % task)
        self.assertEqual(status, 200)
        decision = actions["actions"][0]["hookPayload"]["decision"]
        self.assertEqual(decision["action"]["taskGroupId"], task)
        self.assertEqual(decision["push"]["revision"], "b" * 40)

    def test_jobs_list_zips_with_property_names_and_logs_can_stay_pending(self):
        task = "GWxTc8p_RUa5_Xo4RtMiCA"
        self.call("POST", "/_control/scenario", {
            "jobs": {task: [{"id": 777001, "retry_id": 0, "result": "testfailed"}]},
            "artifacts": {task: {"0": [{"name": "public/test_info/m_errorsummary.log",
                                        "content": "{}"}]}}})
        status, listing = self.call("GET", "/api/jobs/?task_id=" + task)
        rows = [dict(zip(listing["job_property_names"], r)) for r in listing["results"]]
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["id"], 777001)
        self.assertEqual(rows[0]["tier"], 2)  # from the task definition's extra.treeherder
        self.assertEqual(rows[0]["task_id"], task)
        self.call("POST", "/_control/faults", {"path_prefix": "/api/project/", "kind":
                                               "parse_pending", "times": 2})
        statuses = []
        for _ in range(3):
            status, logs = self.call("GET", "/api/project/autoland/job-log-url/?job_id=777001")
            self.assertEqual(status, 200, logs)
            statuses.append({log["parse_status"] for log in logs})
            self.assertIn("errorsummary_json", [log["name"] for log in logs])
        self.assertEqual(statuses, [{"pending"}, {"pending"}, {"parsed"}])
        # The job belongs to the project of its task's treeherder route (autoland).
        status, _ = self.call("GET", "/api/project/try/job-log-url/?job_id=777001")
        self.assertEqual(status, 404)

    def test_alert_summaries_page_with_next_and_filter_by_framework(self):
        status, first = self.call("GET", "/api/performance/alertsummary/?limit=2")
        self.assertEqual(first["count"], 4)
        self.assertEqual(len(first["results"]), 2)
        path = first["next"][len(self.base):]
        status, second = self.call("GET", path)
        self.assertEqual(len(second["results"]), 2)
        self.assertIsNone(second["next"])
        status, talos = self.call("GET", "/api/performance/alertsummary/?framework=1")
        self.assertTrue(talos["results"])
        self.assertTrue(all(s["framework"] == 1 for s in talos["results"]))

    def test_hook_trigger_needs_valid_hawk_and_an_encoded_hook_id(self):
        self.call("POST", "/_control/scenario", {"hook_clients": {"project/retrig/py": "tok"}})
        payload = {"user": {"input": {"times": 2}, "taskId": "GWxTc8p_RUa5_Xo4RtMiCA",
                            "taskGroupId": "grp-py-test"}}
        status, answer = self.call("POST", HOOK, payload, self.hawk("tok", HOOK, "n1"))
        self.assertEqual(status, 200, answer)
        self.assertEqual(answer["status"]["state"], "pending")
        status, group = self.call("GET", "/api/queue/v1/task-group/grp-py-test/list")
        self.assertEqual([t["task"]["extra"]["action"]["input"] for t in group["tasks"]],
                         [{"times": 2}])
        status, _ = self.call("POST", HOOK, payload, self.hawk("wrong", HOOK, "n2"))
        self.assertEqual(status, 401)
        unencoded = HOOK.replace("%2F", "/")
        status, _ = self.call("POST", unencoded, payload, self.hawk("tok", unencoded, "n3"))
        self.assertEqual(status, 404)
        status, triggers = self.call("GET", "/_control/triggers")
        self.assertEqual(len(triggers), 1)
        status, calls = self.call("GET", "/_control/calls?path_prefix=/api/hooks/")
        self.assertEqual(len(calls), 3)
        for call in calls:
            self.assertIn('mac="***"', call["headers"]["Authorization"])

    def test_github_runs_paginate_with_link_and_etags(self):
        self.call("POST", "/_control/reset", {"data": True})
        status, answer = self.call("POST", "/_control/scenario", {"github": {
            "repos": {"o/r": {"default_branch": "main"}}, "runs": gh_runs(), "token": GH_TOKEN}})
        self.assertEqual(status, 200, answer)
        status, _ = self.call("GET", "/repos/o/r/actions/runs")
        self.assertEqual(status, 401)
        status, repo, _ = self.call("GET", "/repos/o/r", headers=GH_AUTH, with_headers=True)
        self.assertEqual(repo["default_branch"], "main")
        path, seen, etag = "/repos/o/r/actions/runs?per_page=2&created=%3E%3D2024-05-02", [], None
        while path:
            status, page, headers = self.call("GET", path, headers=GH_AUTH, with_headers=True)
            self.assertEqual(status, 200, page)
            etag = etag or headers["ETag"]
            seen += [(r["id"], r["run_attempt"], [p["number"] for p in r["pull_requests"]],
                      r["head_repository"]["full_name"]) for r in page["workflow_runs"]]
            links = dict((rel.split('"')[1], url.strip()[1:-1]) for url, rel in
                         (part.split(";") for part in headers.get("Link", "").split(",") if part))
            path = links.get("next")
        # newest first; the created filter dropped run 11
        self.assertEqual(seen, [(13, 1, [], "o/r"), (12, 1, [], "eve/r")])
        first = "/repos/o/r/actions/runs?per_page=2&created=%3E%3D2024-05-02"
        status, _, _ = self.call("GET", first, headers=dict(GH_AUTH, **{"If-None-Match": etag}),
                                 with_headers=True)
        self.assertEqual(status, 304)
        status, run, _ = self.call("GET", "/repos/o/r/actions/runs/11/attempts/1", headers=GH_AUTH,
                                   with_headers=True)
        self.assertEqual((run["run_attempt"], run["conclusion"]), (1, "failure"))
        status, run, _ = self.call("GET", "/repos/o/r/actions/runs/11", headers=GH_AUTH, with_headers=True)
        self.assertEqual((run["run_attempt"], run["conclusion"], run["pull_requests"][0]["number"]),
                         (2, "success", 5))

    def test_github_artifacts_redirect_to_storage_that_refuses_authorization(self):
        self.call("POST", "/_control/reset", {"data": True})
        self.call("POST", "/_control/scenario", {"github": {"runs": gh_runs(), "token": GH_TOKEN}})
        status, listing, _ = self.call("GET", "/repos/o/r/actions/runs/11/artifacts", headers=GH_AUTH,
                                       with_headers=True)
        self.assertEqual(listing["total_count"], 2)
        live, expired = listing["artifacts"]
        self.assertFalse(live["expired"])
        self.assertTrue(expired["expired"])
        self.assertLess(live["created_at"], expired["created_at"])  # attempt 1, then 2
        status, _, headers = self.call("GET", "/repos/o/r/actions/artifacts/%d/zip" % live["id"],
                                       headers=GH_AUTH, with_headers=True)
        self.assertEqual(status, 302)
        location = headers["Location"]
        self.assertIn("/storage/artifacts/", location)
        status, _ = self.call("GET", location, headers=GH_AUTH)
        self.assertEqual(status, 400)
        status, data = self.call("GET", location)
        self.assertEqual(status, 200)
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            self.assertEqual(z.namelist(), ["r.xml"])
        status, answer = self.call("GET", "/repos/o/r/actions/artifacts/%d/zip" % expired["id"],
                                   headers=GH_AUTH)
        self.assertEqual(status, 410)

    def test_github_rate_limit_counts_down_and_resets(self):
        self.call("POST", "/_control/reset", {"data": True})
        self.call("POST", "/_control/scenario", {"github": {
            "runs": gh_runs(), "rate_limit": {"limit": 2, "reset_s": 1}}})
        remaining = []
        for _ in range(3):
            status, answer, headers = self.call("GET", "/repos/o/r", with_headers=True)
            remaining.append((status, headers["x-ratelimit-remaining"]))
        self.assertEqual(remaining, [(200, "1"), (200, "0"), (403, "0")])
        self.assertIn("rate limit", answer["message"])
        time.sleep(1.2)
        status, _ = self.call("GET", "/repos/o/r")
        self.assertEqual(status, 200)
        # a secondary limit is an injected fault with retry-after
        self.call("POST", "/_control/faults", {"path_prefix": "/repos/", "kind": "status",
                                               "status": 403, "times": 1,
                                               "headers": {"retry-after": "1"},
                                               "body": {"message": "secondary rate limit"}})
        status, _, headers = self.call("GET", "/repos/o/r", with_headers=True)
        self.assertEqual((status, headers["retry-after"]), (403, "1"))

    def test_github_issues_and_comments(self):
        self.call("POST", "/_control/reset", {"data": True})
        self.call("POST", "/_control/scenario", {"github": {"repos": {"o/r": {}}}})
        status, issue = self.call("POST", "/repos/o/r/issues",
                                  {"title": "Flaky test: t", "body": "<!-- m -->\nx", "labels": ["flaky-test"]})
        self.assertEqual((status, issue["number"], issue["state"]), (201, 1, "open"))
        self.call("POST", "/repos/o/r/issues", {"title": "other"})
        status, listed = self.call("GET", "/repos/o/r/issues?labels=flaky-test&state=all")
        self.assertEqual([i["number"] for i in listed], [1])
        status, comment = self.call("POST", "/repos/o/r/issues/1/comments", {"body": "figures"})
        self.assertEqual(status, 201)
        status, edited = self.call("PATCH", "/repos/o/r/issues/comments/%d" % comment["id"],
                                   {"body": "new figures"})
        self.assertEqual(edited["body"], "new figures")
        status, closed = self.call("PATCH", "/repos/o/r/issues/1", {"state": "closed",
                                                                    "state_reason": "completed"})
        self.assertEqual((closed["state"], closed["state_reason"]), ("closed", "completed"))
        status, listed = self.call("GET", "/repos/o/r/issues?labels=flaky-test")
        self.assertEqual(listed, [])  # open only by default
        status, dump = self.call("GET", "/_control/github")
        self.assertEqual([c["body"] for c in dump["issues"][0]["comment_list"]], ["new figures"])

    def test_bugzilla_files_finds_and_resolves_bugs(self):
        self.call("POST", "/_control/reset", {"data": True})
        self.call("POST", "/_control/scenario", {"github": {"bugzilla_api_key": "k3y"}})
        bug = {"product": "Testing", "component": "General", "summary": "Flaky test: t",
               "version": "unspecified", "whiteboard": "[retrig-flaky: 01]"}
        status, _ = self.call("POST", "/rest/bug", bug)
        self.assertEqual(status, 401)
        key = {"X-BUGZILLA-API-KEY": "k3y"}
        status, answer = self.call("POST", "/rest/bug", dict(bug, component=""), headers=key)
        self.assertEqual(status, 400)
        status, answer = self.call("POST", "/rest/bug", bug, headers=key)
        self.assertEqual(status, 200)
        status, found = self.call("GET", "/rest/bug?whiteboard=%5Bretrig-flaky%3A%2001%5D", headers=key)
        self.assertEqual([b["id"] for b in found["bugs"]], [answer["id"]])
        status, changed = self.call("PUT", "/rest/bug/%d" % answer["id"],
                                    {"status": "RESOLVED", "resolution": "WORKSFORME",
                                     "comment": {"body": "quiet"}}, headers=key)
        self.assertEqual(changed["bugs"][0]["changes"]["status"]["added"], "RESOLVED")

    def test_sigterm_exits_cleanly_and_removes_the_port_file(self):
        port_file = os.path.join(self.tmp, "port2")
        proc = subprocess.Popen([sys.executable, SCRIPT, "--port", "0", "--port-file", port_file,
                                 "--fixtures", FIXTURES, "--quiet"])
        deadline = time.time() + 20
        while not os.path.exists(port_file) and time.time() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=10), 0)
        self.assertFalse(os.path.exists(port_file))


if __name__ == "__main__":
    unittest.main()
