#!/usr/bin/python3
# SPDX-License-Identifier: MPL-2.0
# fake_upstream.py - a local stand-in for Taskcluster (queue, hooks), Treeherder and
# Perfherder that serves the real recorded responses in tests/fixtures, verifies Hawk
# on the write endpoints, records every call and injects faults. Standard library only.
# See README.md beside this file for the scenario format and the control interface.
import argparse
import base64
import calendar
import copy
import email.utils
import gc
import hashlib
import hmac
import json
import os
import re
import select
import signal
import socket
import sys
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import github_fake

HAWK_SKEW_S = 60
STALL_DEFAULT_MS = 60000
ARTIFACT_PAGE_DEFAULT = 1000
TASK_GROUP_PAGE_DEFAULT = 1000
INDEX_PAGE_DEFAULT = 1000
ALERT_PAGE_DEFAULT = 10
SLUG_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
FIXED_JOB_DETAIL_KEYS = ("build_architecture", "build_os", "build_system_type",
                         "machine_platform_architecture", "machine_platform_os")


class HttpError(Exception):
    """An answer other than 200 that a handler decides on."""

    def __init__(self, status, body, headers=None):
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}


def tc_error(status, code, message):
    return HttpError(status, {"code": code, "message": message,
                              "requestInfo": {"time": now_iso()}})


def th_not_found():
    return HttpError(404, {"detail": "Not found."})


def now_iso(offset_s=0.0):
    t = time.time() + offset_s
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)


def slug_id():
    """A Taskcluster slugid (v4 uuid, url-safe base64, first bit clear)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    raw[0] &= 0x7F
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def encode_token(offset):
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def decode_token(token):
    try:
        return int(json.loads(base64.urlsafe_b64decode(token.encode()))["offset"])
    except Exception:
        raise tc_error(400, "InputError", "invalid continuationToken")


def page_limit(query, default):
    try:
        limit = int(query.get("limit", [default])[0])
    except ValueError:
        raise tc_error(400, "InputError", "invalid limit")
    return max(1, min(limit, default))


class Store:
    """All the data the fake serves, the calls it saw, faults and triggers. One lock."""

    def __init__(self, fixtures):
        self.fixtures = os.path.abspath(fixtures)
        self.lock = threading.RLock()
        self.reset_data()
        self.reset_calls()

    # ---- loading -------------------------------------------------------------------
    def fixture_path(self, relative):
        path = os.path.normpath(os.path.join(self.fixtures, relative))
        if not path.startswith(self.fixtures + os.sep):
            raise ValueError("fixture path outside the fixtures folder: %s" % relative)
        return path

    def fixture_bytes(self, relative):
        with open(self.fixture_path(relative), "rb") as f:
            return f.read()

    def fixture_json(self, relative):
        return json.loads(self.fixture_bytes(relative))

    def resolve(self, value):
        """{"fixture": path, "override": {...}} -> the fixture's JSON (overridden); else value."""
        if isinstance(value, dict) and "fixture" in value:
            data = self.fixture_json(value["fixture"])
            if isinstance(data, dict) and isinstance(value.get("override"), dict):
                data.update(copy.deepcopy(value["override"]))
            return data
        return copy.deepcopy(value)

    def reset_data(self):
        with self.lock:
            self.tasks = {}
            self.task_bodies = {}  # task id -> its definition serialized, made on first GET
            self.statuses = {}
            # task group -> {task id: None} (insertion order), for the task-group listing
            self.group_tasks = {}
            self.group_statuses = {}
            self.job_property_names = self.fixture_json(
                "treeherder/jobs_list_with_property_names.json")["job_property_names"]
            self.artifacts = {}
            self.jobs = {}  # job id -> job dict (with task_id)
            self.task_jobs = {}  # task id -> {job id: None}
            self.job_logs = {}
            self.bug_suggestions = {}
            self.hook_clients = {}
            self.hooks = set()
            self.alert_summaries = []
            self.performance_data = []  # datums in the API's shape, plus "project"
            self.index = {}  # namespace -> {name: entry}, from the scenario's "index"
            self.pushes = {}  # project -> {push id: {"id", "revision", "author", ...}}
            self.add_new_jobs = {}  # revision -> result of the jobs add-new-jobs makes there
            self.next_job_id = 700000000
            self.github = github_fake.GitHubFake()  # GitHub and Bugzilla (github_fake.py)
            self.default_bug_suggestions = self.fixture_json("treeherder/bug_suggestions.json")
            self.failure_classifications = [
                {"id": row["pk"], "name": row["fields"]["name"]}
                for row in self.fixture_json("treeherder/failure_classification.json")]
            self.frameworks = [
                {"id": row["pk"], "name": row["fields"]["name"]}
                for row in self.fixture_json("perfherder/performance_framework.json")]
            self.load_default_fixtures()

    def load_default_fixtures(self):
        tc_dir = self.fixture_path("taskcluster/x")[:-2]
        for name in sorted(os.listdir(tc_dir)):
            m = re.fullmatch(r"task_definition_(.+)\.json", name)
            if m:
                self.put_task(m.group(1), self.fixture_json("taskcluster/" + name))
        pulse_dir = self.fixture_path("pulse/x")[:-2]
        for name in sorted(os.listdir(pulse_dir)):
            body = self.fixture_json("pulse/" + name)
            body = body.get("payload", body)
            status = body.get("status") if isinstance(body, dict) else None
            if isinstance(status, dict) and status.get("taskId"):
                self.put_status(status["taskId"], status)
        actions = self.fixture_json("taskcluster/actions.json")
        for action in actions.get("actions", []):
            if action.get("kind") == "hook":
                self.hooks.add((action["hookGroupId"], action["hookId"]))
        listing = self.fixture_json("treeherder/jobs_list_with_property_names.json")
        names = listing["job_property_names"]
        for row in listing["results"]:
            job = dict(zip(names, row))
            self.put_job(job)
        detail = self.fixture_json("treeherder/job_detail.json")
        detail["project"] = detail["resource_uri"].split("/")[3]
        self.put_job(detail)
        for log in self.fixture_json("treeherder/job_log_urls.json"):
            self.job_logs.setdefault(int(log["job_id"]), []).append(log)
        summaries = self.fixture_json("perfherder/alert_summaries.json")
        summaries.append(self.fixture_json("perfherder/alert_summary_with_different_status.json"))
        self.alert_summaries = summaries

    # ---- writing (with the lock held): the indexes follow ----------------------------
    @staticmethod
    def group_of(value):
        return value.get("taskGroupId") if isinstance(value, dict) else None

    def put_indexed(self, table, index, task_id, value):
        old = self.group_of(table.get(task_id))
        if old is not None and old != self.group_of(value):
            index.get(old, {}).pop(task_id, None)
        table[task_id] = value
        if self.group_of(value) is not None:
            index.setdefault(self.group_of(value), {})[task_id] = None

    def put_task(self, task_id, definition):
        self.put_indexed(self.tasks, self.group_tasks, task_id, definition)
        self.task_bodies.pop(task_id, None)

    def task_body(self, task_id):
        """The definition as the GET answers it (None when there is none); call with the
        lock held."""
        body = self.task_bodies.get(task_id)
        if body is None and task_id in self.tasks:
            body = json.dumps(self.tasks[task_id]).encode()
            self.task_bodies[task_id] = body
        return body

    def put_status(self, task_id, status):
        self.put_indexed(self.statuses, self.group_statuses, task_id, status)

    def put_job(self, job):
        job_id = int(job["id"])
        old = self.jobs.get(job_id)
        if old is not None:
            self.task_jobs.get(old.get("task_id"), {}).pop(job_id, None)
        self.jobs[job_id] = job
        self.task_jobs.setdefault(job.get("task_id"), {})[job_id] = None

    def load_scenario(self, scenario):
        if not isinstance(scenario, dict):
            raise ValueError("a scenario is a JSON object")
        known = {"tasks", "statuses", "artifacts", "jobs", "job_logs", "bug_suggestions",
                 "hook_clients", "hooks", "alert_summaries", "performance_data", "faults",
                 "index", "github", "pushes", "add_new_jobs"}
        unknown = set(scenario) - known
        if unknown:
            raise ValueError("unknown scenario keys: %s" % ", ".join(sorted(unknown)))
        with self.lock:
            for task_id, value in scenario.get("tasks", {}).items():
                self.put_task(task_id, self.resolve(value))
            for task_id, value in scenario.get("statuses", {}).items():
                status = self.resolve(value)
                if isinstance(status, dict) and "payload" in status:  # a pulse fixture
                    status = status["payload"]
                if isinstance(status, dict) and "status" in status and "taskId" not in status:
                    status = status["status"]
                base = self.task_status(task_id) or {}
                base.update(status)
                base["taskId"] = task_id
                self.put_status(task_id, base)
            for task_id, runs in scenario.get("artifacts", {}).items():
                for run_id, entries in runs.items():
                    self.artifacts.setdefault(task_id, {})[int(run_id)] = [
                        self.make_artifact(e) for e in entries]
            for task_id, jobs in scenario.get("jobs", {}).items():
                for job in jobs:
                    job = dict(job)
                    if "id" not in job:
                        raise ValueError("treeherder job for %s needs an id" % task_id)
                    job["task_id"] = task_id
                    if "run" in job and "retry_id" not in job:
                        job["retry_id"] = job.pop("run")
                    self.put_job(job)
            for job_id, value in scenario.get("job_logs", {}).items():
                self.job_logs[int(job_id)] = value if isinstance(value, str) else self.resolve(value)
            for job_id, value in scenario.get("bug_suggestions", {}).items():
                self.bug_suggestions[int(job_id)] = self.resolve(value)
            for client_id, token in scenario.get("hook_clients", {}).items():
                self.hook_clients[client_id] = token
            for hook in scenario.get("hooks", []):
                self.hooks.add((hook["hookGroupId"], hook["hookId"]))
            for value in scenario.get("alert_summaries", []):
                summary = self.resolve(value)
                self.alert_summaries = [s for s in self.alert_summaries
                                        if s.get("id") != summary.get("id")]
                self.alert_summaries.append(summary)
            for series in scenario.get("performance_data", []):
                self.add_performance_series(series)
            for namespace, entries in scenario.get("index", {}).items():
                for entry in entries:
                    self.add_index_entry(namespace, entry)
            for project, pushes in scenario.get("pushes", {}).items():
                for push in pushes:
                    if not isinstance(push, dict) or not isinstance(push.get("id"), int):
                        raise ValueError("a push of %s needs an integer id" % project)
                    entry = {"id": push["id"], "revision": push.get("revision", "0" * 40),
                             "author": push.get("author", "someone@example.com"),
                             "push_timestamp": push.get("push_timestamp", 1700000000 + push["id"]),
                             "revision_count": 1, "repository_id": 77}
                    self.pushes.setdefault(project, {})[push["id"]] = entry
            for revision, result in scenario.get("add_new_jobs", {}).items():
                self.add_new_jobs[revision] = result
            if "github" in scenario:
                self.github.load(scenario["github"])
            if "faults" in scenario:
                self.add_faults(scenario["faults"])

    def add_index_entry(self, namespace, entry):
        """{"taskId", "name"?, "rank"?, "data"?, "expires"?} indexed under namespace (name
        defaults to the taskId, as gecko's `...actions.<taskId>` routes do)."""
        if not isinstance(entry, dict) or not entry.get("taskId"):
            raise ValueError("an index entry needs a taskId")
        name = entry.get("name", entry["taskId"])
        self.index.setdefault(namespace, {})[name] = {
            "namespace": "%s.%s" % (namespace, name), "taskId": entry["taskId"],
            "rank": entry.get("rank", 0), "data": entry.get("data", {}),
            "expires": entry.get("expires", now_iso(365 * 86400))}

    def indexed(self, namespace):
        """The entries immediately under namespace: the scenario's, then those of completed
        tasks with a route index.<namespace>.<name> (the index service indexes a task's
        routes when it completes), ordered by name."""
        with self.lock:
            entries = dict(self.index.get(namespace, {}))
            prefix = "index.%s." % namespace
            for task_id, task in self.tasks.items():
                if not isinstance(task, dict):
                    continue
                for route in task.get("routes", []):
                    if not isinstance(route, str) or not route.startswith(prefix):
                        continue
                    name = route[len(prefix):]
                    if not name or "." in name or name in entries:
                        continue
                    status = self.task_status(task_id) or {}
                    if status.get("state") != "completed":
                        continue
                    entries[name] = {"namespace": "%s.%s" % (namespace, name), "taskId": task_id,
                                     "rank": 0, "data": {},
                                     "expires": task.get("expires", now_iso(365 * 86400))}
            return [copy.deepcopy(entries[n]) for n in sorted(entries)]

    def add_performance_series(self, series):
        """{"project", "signature_id", "signature_hash", "data": [...] or {"fixture": ...}}:
        data points in the API's shape or in BackfillRecord.context's (perf_datum_id,
        push__revision, ISO push_timestamp), stored in the API's shape."""
        points = self.resolve(series["data"])
        if not isinstance(points, list):
            raise ValueError("performance_data: data must be a list of data points")
        for point in points:
            stamp = point.get("push_timestamp")
            if isinstance(stamp, str):
                stamp = int(calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")))
            datum = {"id": int(point.get("id", point.get("perf_datum_id", 0))),
                     "signature_id": int(series["signature_id"]),
                     "job_id": int(point["job_id"]), "push_id": int(point["push_id"]),
                     "revision": point.get("revision", point.get("push__revision")),
                     "push_timestamp": stamp, "value": round(float(point["value"]), 2)}
            self.performance_data = [d for d in self.performance_data
                                     if not (d["id"] == datum["id"]
                                             and d["signature_id"] == datum["signature_id"])]
            datum["project"] = series["project"]
            datum["signature_hash"] = series["signature_hash"]
            self.performance_data.append(datum)

    def make_artifact(self, entry):
        name = entry["name"]
        if "fixture" in entry:
            content = self.fixture_bytes(entry["fixture"])
        elif "json" in entry:
            content = json.dumps(entry["json"]).encode()
        else:
            content = entry.get("content", "").encode()
        # {"replace": {"old": "new"}}: a recorded artifact moved to another push (its decision
        # task group and revision), as each test's pushes are made up.
        for old, new in sorted((entry.get("replace") or {}).items()):
            content = content.replace(old.encode(), new.encode())
        default_type = "application/json" if name.endswith(".json") else "text/plain; charset=utf-8"
        return {"name": name, "storageType": entry.get("storageType", "s3"),
                "expires": entry.get("expires", now_iso(365 * 86400)),
                "contentType": entry.get("contentType", default_type), "content": content}

    # ---- calls, faults, triggers ---------------------------------------------------
    def reset_calls(self):
        with self.lock:
            self.calls = []
            self.faults = []
            self.triggers = []
            self.nonces = set()
            self.pending_polls = {}

    def add_faults(self, rules):
        if isinstance(rules, dict):
            rules = [rules]
        with self.lock:
            for rule in rules:
                kind = rule.get("kind")
                if kind not in ("latency", "status", "drop_mid_body", "stall", "parse_pending",
                                "large_body"):
                    raise ValueError("unknown fault kind: %r" % kind)
                if "path_prefix" not in rule and "path_regex" not in rule:
                    raise ValueError("a fault needs path_prefix or path_regex")
                rule = dict(rule)
                if "path_regex" in rule:
                    rule["_regex"] = re.compile(rule["path_regex"])
                if "every" in rule and (not isinstance(rule["every"], int) or rule["every"] < 1):
                    raise ValueError("every must be a positive integer")
                rule["_used"] = 0
                rule["_seen"] = 0
                self.faults.append(rule)

    def match_fault(self, method, path, target):
        """The first rule matching this request, its use counted; parse_pending is
        handled by the job-log-url handler and never returned here."""
        with self.lock:
            for rule in self.faults:
                if rule["kind"] == "parse_pending":
                    continue
                if rule.get("method") and rule["method"].upper() != method:
                    continue
                if "_regex" in rule and not rule["_regex"].search(target):
                    continue
                if "path_prefix" in rule and not path.startswith(rule["path_prefix"]):
                    continue
                times = rule.get("times")
                if times is not None and rule["_used"] >= times:
                    continue
                rule["_seen"] += 1
                if rule["_seen"] % rule.get("every", 1) != 0:
                    continue
                rule["_used"] += 1
                return dict(rule)
        return None

    def parse_pending_for(self, job_id):
        """True when this poll of job_id must answer parse_status pending."""
        with self.lock:
            for index, rule in enumerate(self.faults):
                if rule["kind"] != "parse_pending":
                    continue
                if "job_id" in rule and int(rule["job_id"]) != job_id:
                    continue
                key = (index, job_id)
                seen = self.pending_polls.get(key, 0)
                times = rule.get("times")
                if times is None or seen < times:
                    self.pending_polls[key] = seen + 1
                    return True
        return False

    # ---- Taskcluster helpers -------------------------------------------------------
    def task_status(self, task_id):
        with self.lock:
            if task_id in self.statuses:
                return copy.deepcopy(self.statuses[task_id])
            task = self.tasks.get(task_id)
            if task is None:
                return None
            runs = sorted(self.artifacts.get(task_id, {}).keys()) or [0]
            created = task.get("created") or now_iso()
            status = {
                "taskId": task_id,
                "provisionerId": task.get("provisionerId", "proj-fake"),
                "workerType": task.get("workerType", "fake"),
                "taskQueueId": task.get("taskQueueId", "%s/%s" % (
                    task.get("provisionerId", "proj-fake"), task.get("workerType", "fake"))),
                "schedulerId": task.get("schedulerId", "-"),
                "projectId": task.get("projectId", "none"),
                "taskGroupId": task.get("taskGroupId", task_id),
                "deadline": task.get("deadline") or now_iso(86400),
                "expires": task.get("expires") or now_iso(365 * 86400),
                "retriesLeft": task.get("retries", 5),
                "state": "completed",
                "runs": [{"runId": r, "state": "completed", "reasonCreated": "scheduled" if r == 0
                          else "rerun", "reasonResolved": "completed", "workerGroup": "fake",
                          "workerId": "fake-worker", "scheduled": created,
                          "started": created, "resolved": created} for r in runs],
            }
            return status

    def create_action_task(self, hook_group, hook_id, payload, client_id):
        decision = payload.get("decision", {}) if isinstance(payload, dict) else {}
        user = payload.get("user", {}) if isinstance(payload, dict) else {}
        action = decision.get("action", {}) if isinstance(decision, dict) else {}
        group = (user.get("taskGroupId") if isinstance(user, dict) else None) \
            or action.get("taskGroupId") or slug_id()
        task_id = slug_id()
        created = now_iso()
        action_input = user.get("input") if isinstance(user, dict) else None
        target = user.get("taskId") if isinstance(user, dict) else None
        push = decision.get("push", {}) if isinstance(decision, dict) else {}
        repository = decision.get("repository", {}) if isinstance(decision, dict) else {}
        routes = []  # as gecko's .taskcluster.yml gives action tasks
        if isinstance(push, dict) and isinstance(repository, dict) and repository.get("project") \
                and push.get("revision") and push.get("pushlog_id"):
            routes = ["tc-treeherder.v2.%s.%s.%s" % (repository["project"], push["revision"],
                                                     push["pushlog_id"]),
                      "index.gecko.v2.%s.pushlog-id.%s.actions.%s" % (
                          repository["project"], push["pushlog_id"], task_id)]
        task = {
            "provisionerId": "gecko-3", "workerType": "decision", "taskQueueId": "gecko-3/decision",
            "schedulerId": "gecko-level-3", "projectId": "none", "taskGroupId": group,
            "dependencies": [], "requires": "all-completed", "routes": routes, "priority": "lowest",
            "retries": 5, "created": created, "deadline": now_iso(86400),
            "expires": now_iso(365 * 86400), "scopes": [],
            "payload": {"env": {"ACTION_CALLBACK": action.get("cb_name"),
                                "ACTION_INPUT": json.dumps(action_input),
                                "ACTION_TASK_GROUP_ID": group,
                                "ACTION_TASK_ID": json.dumps(target)},
                        "hookPayload": payload},
            "metadata": {"name": "Action: %s" % action.get("title", action.get("name", hook_id)),
                         "description": action.get("description", ""),
                         "owner": client_id, "source": "fake-upstream"},
            "tags": {"kind": "action-callback", "action": action.get("name", ""),
                     "createdForUser": client_id},
            "extra": {"parent": group,
                      "action": {"name": action.get("name"), "input": action_input,
                                 "taskId": target, "taskGroupId": group,
                                 "context": {"taskGroupId": group, "taskId": target,
                                             "input": action_input,
                                             "parameters": decision.get("parameters")
                                             if isinstance(decision, dict) else None}}},
        }
        status = {
            "taskId": task_id, "provisionerId": "gecko-3", "workerType": "decision",
            "taskQueueId": "gecko-3/decision", "schedulerId": "gecko-level-3",
            "projectId": "none", "taskGroupId": group, "deadline": task["deadline"],
            "expires": task["expires"], "retriesLeft": 5, "state": "pending",
            "runs": [{"runId": 0, "state": "pending", "reasonCreated": "scheduled",
                      "scheduled": created}],
        }
        with self.lock:
            self.put_task(task_id, task)
            self.put_status(task_id, status)
            if action.get("name") == "add-new-jobs":
                self.add_jobs_of_action(push, action_input)
            self.triggers.append({"hookGroupId": hook_group, "hookId": hook_id,
                                  "clientId": client_id, "payload": payload,
                                  "taskId": task_id, "taskGroupId": group,
                                  "time": time.time()})
        return copy.deepcopy(status)

    def add_jobs_of_action(self, push, action_input):
        """What add-new-jobs makes (with the lock held): `times` completed Treeherder jobs of
        each label on the push (its Treeherder id from `pushes` by revision, else its pushlog
        id), with the result `add_new_jobs` gives the revision (default success; "none": no
        jobs at all; "running": jobs listed that never finish, state running and result
        unknown as Treeherder shows them); a failed one gets the default bug_suggestions (the
        recorded failure line)."""
        revision = push.get("revision") if isinstance(push, dict) else None
        if not isinstance(action_input, dict) or not revision:
            return
        push_id = None
        for pushes in self.pushes.values():
            for entry in pushes.values():
                if entry["revision"] == revision:
                    push_id = entry["id"]
        if push_id is None and str(push.get("pushlog_id", "")).isdigit():
            push_id = int(push["pushlog_id"])
        result = self.add_new_jobs.get(revision, "success")
        if result == "none":
            return  # the action task only: the jobs it should make never come
        times = action_input.get("times", 1)
        for label in action_input.get("tasks", []):
            for _ in range(times if isinstance(times, int) and 0 < times <= 100 else 1):
                self.next_job_id += 1
                self.put_job({"id": self.next_job_id, "task_id": slug_id(), "retry_id": 0,
                              "push_id": push_id, "job_type_name": label,
                              "result": "unknown" if result == "running" else result,
                              "state": "running" if result == "running" else "completed",
                              "push_revision": revision})

    def verify_hawk(self, header, method, target, host_header, body, content_type):
        """Returns (client_id, None) or (client_id_or_None, reason)."""
        if not header or not header.startswith("Hawk "):
            return None, "missing Hawk Authorization header"
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', header[5:]))
        for required in ("id", "ts", "nonce", "mac"):
            if required not in attrs:
                return attrs.get("id"), "Hawk header lacks %s" % required
        client_id = attrs["id"]
        with self.lock:
            token = self.hook_clients.get(client_id)
        if token is None:
            return client_id, "unknown client %s" % client_id
        try:
            ts = int(attrs["ts"])
        except ValueError:
            return client_id, "bad ts"
        if abs(time.time() - ts) > HAWK_SKEW_S:
            return client_id, "timestamp skew over %d s" % HAWK_SKEW_S
        host, _, port = (host_header or "").rpartition(":")
        if not host or not port.isdigit():
            host, port = host_header or "", "80"
        normalized = "hawk.1.header\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n" % (
            attrs["ts"], attrs["nonce"], method, target, host.lower(), port,
            attrs.get("hash", ""), attrs.get("ext", ""))
        expected = base64.b64encode(hmac.new(token.encode(), normalized.encode(),
                                             hashlib.sha256).digest()).decode()
        if not hmac.compare_digest(expected, attrs["mac"]):
            return client_id, "bad mac"
        if "hash" in attrs:
            mime = (content_type or "").split(";")[0].strip().lower()
            payload = b"hawk.1.payload\n" + mime.encode() + b"\n" + body + b"\n"
            if base64.b64encode(hashlib.sha256(payload).digest()).decode() != attrs["hash"]:
                return client_id, "payload hash mismatch"
        with self.lock:
            if (client_id, attrs["nonce"]) in self.nonces:
                return client_id, "nonce reused"
            self.nonces.add((client_id, attrs["nonce"]))
        return client_id, None

    # ---- Treeherder helpers --------------------------------------------------------
    def job_view(self, job):
        """A full job dict: the registered fields plus what the task definition implies."""
        task = self.tasks.get(job.get("task_id"), {})
        th = task.get("extra", {}).get("treeherder", {}) if isinstance(task, dict) else {}
        project, revision, push_id = None, None, None
        for route in task.get("routes", []) if isinstance(task, dict) else []:
            parts = route.split(".")
            if len(parts) >= 5 and parts[0] == "tc-treeherder" and parts[1] == "v2":
                project, revision, push_id = parts[2], parts[3], parts[4]
        collection = th.get("collection", {"opt": True})
        view = {
            "duration": 1, "failure_classification_id": 1,
            "job_group_name": th.get("groupName", "unknown"),
            "job_group_symbol": th.get("groupSymbol", "?"),
            "job_type_name": task.get("metadata", {}).get("name", "unknown")
            if isinstance(task, dict) else "unknown",
            "job_type_symbol": th.get("symbol", "?"),
            "last_modified": now_iso()[:-1], "option_collection_hash":
            hashlib.sha1(",".join(sorted(collection)).encode()).hexdigest(),
            "platform": th.get("machine", {}).get("platform", "unknown"),
            "platform_option": sorted(collection)[0] if collection else "opt",
            "push_id": int(push_id) if push_id and push_id.isdigit() else 1,
            "result": "testfailed", "signature": hashlib.sha1(
                str(job.get("task_id")).encode()).hexdigest(),
            "state": "completed", "tier": th.get("tier", 1), "retry_id": 0,
            "push_revision": revision or "0" * 40,
        }
        if project:
            view["project"] = project
        view.update(job)
        return view


class RequestHeaders:
    """A request's header fields: get() by name, any case (the first of repeated fields, as
    email.message does), items() in arrival order. The standard handler parses them with the
    email package, which was most of the fake's time per request under benchmarks."""
    __slots__ = ("_items", "_first")

    def __init__(self, items):
        self._items = items
        self._first = {}
        for name, value in items:
            self._first.setdefault(name.lower(), value)

    def get(self, name, default=None):
        return self._first.get(name.lower(), default)

    def __getitem__(self, name):
        return self._first.get(name.lower())

    def __contains__(self, name):
        return name.lower() in self._first

    def items(self):
        return list(self._items)


_date_cache = [0, ""]


def http_date():
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[1] = email.utils.formatdate(now, usegmt=True)
        _date_cache[0] = now
    return _date_cache[1]


class Handler(BaseHTTPRequestHandler):
    # Answers go out at once: with Nagle on, a reused connection stalls ~40 ms per reply.
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    server_version = "fake-upstream/1"
    store = None
    quiet = False

    def log_message(self, fmt, *args):  # the one line per request is written in finish_call
        pass

    def parse_request(self):
        """The request line and header fields, as BaseHTTPRequestHandler.parse_request does
        (400 on a malformed line, 431 on too many or too long fields, keep-alive by
        version and Connection, Expect: 100-continue) without the email parser."""
        self.command = None
        self.request_version = self.default_request_version
        self.close_connection = True
        requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        self.requestline = requestline
        words = requestline.split()
        if len(words) != 3 or not words[2].startswith("HTTP/1."):
            self.send_error(400, "Bad request syntax (%r)" % requestline)
            return False
        self.command, self.path, self.request_version = words
        items = []
        while True:
            line = self.rfile.readline(65537)
            if len(line) > 65536:
                self.send_error(431, "Line too long")
                return False
            if line in (b"\r\n", b"\n", b""):
                break
            if len(items) >= 100:
                self.send_error(431, "Too many headers")
                return False
            name, sep, value = line.decode("iso-8859-1").partition(":")
            if not sep or not name.strip():
                self.send_error(400, "Bad header line")
                return False
            items.append((name.strip(), value.strip()))
        self.headers = RequestHeaders(items)
        connection = (self.headers.get("Connection") or "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive" or self.request_version >= "HTTP/1.1":
            self.close_connection = False
        if ((self.headers.get("Expect") or "").lower() == "100-continue"
                and self.request_version >= "HTTP/1.1"):
            return self.handle_expect_100()
        return True

    # ---- plumbing ------------------------------------------------------------------
    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def dispatch(self):
        started = time.time()
        target = self.path
        parsed = urllib.parse.urlsplit(target)
        path = parsed.path
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        method = self.command
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        self.raw_body = body
        control = path.startswith("/_control/")
        record = None
        if not control:
            record = {"method": method, "path": path, "query": parsed.query,
                      "headers": {k: (self.redact_auth(v) if k.lower() == "authorization" else v)
                                  for k, v in self.headers._items},
                      "body": body.decode("utf-8", "replace"), "time": started,
                      "status": None}
            with self.store.lock:  # listed at arrival, so a stalled call is visible
                self.store.calls.append(record)
        fault = None if control else self.store.match_fault(method, path, target)
        status = 500
        try:
            if fault and fault["kind"] == "latency":
                time.sleep(float(fault.get("ms", 0)) / 1000.0)
            if fault and fault["kind"] == "stall":
                status = 0
                self.stall(float(fault.get("ms", STALL_DEFAULT_MS)) / 1000.0)
                return
            if fault and fault["kind"] == "status":
                fbody = fault.get("body", {"code": "InjectedFault", "message": "injected"})
                status = int(fault.get("status", 500))
                self.send(status, fbody, fault.get("headers"))
                return
            if fault and fault["kind"] == "large_body":
                status = 200
                self.send_large(int(fault.get("bytes", 1 << 20)), bool(fault.get("chunked")))
                return
            try:
                status, payload, headers = self.route(method, path, query, body, target, record)
            except HttpError as e:
                status, payload, headers = e.status, e.body, e.headers
            if fault and fault["kind"] == "drop_mid_body":
                self.send_truncated(status, payload, headers)
            else:
                self.send(status, payload, headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # every failure answers 500 with a message
            traceback.print_exc(file=sys.stderr)
            status = 500
            try:
                self.send(500, {"code": "InternalServerError", "message": "%s: %s" % (
                    type(e).__name__, e)})
            except OSError:
                self.close_connection = True
        finally:
            if record is not None:
                with self.store.lock:
                    record["status"] = status
                    if fault:
                        record["fault"] = fault["kind"]
            if not self.quiet:
                sys.stderr.write("fake-upstream: %s %s -> %s%s (%.0f ms)\n" % (
                    method, path, status, " fault=" + fault["kind"] if fault else "",
                    (time.time() - started) * 1000))

    @staticmethod
    def redact_auth(value):
        return re.sub(r'mac="[^"]*"', 'mac="***"', value)

    def encode(self, payload):
        if isinstance(payload, (bytes, bytearray)):
            return bytes(payload), None
        if isinstance(payload, str):
            return payload.encode(), "text/plain; charset=utf-8"
        return json.dumps(payload).encode(), "application/json; charset=utf-8"

    def send(self, status, payload, headers=None):
        """The whole answer in one write: status line, fields and body (the standard
        send_response/end_headers/write sequence costs two writes, and the client two reads)."""
        data, ctype = self.encode(payload)
        reason = self.responses.get(status, ("",))[0]
        lines = ["%s %d %s" % (self.protocol_version, status, reason),
                 "Server: " + self.version_string(), "Date: " + http_date()]
        headers = dict(headers or {})
        if ctype and not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = ctype
        for key, value in headers.items():
            lines.append("%s: %s" % (key, value))
            if key.lower() == "connection" and str(value).lower() == "close":
                self.close_connection = True
        lines.append("Content-Length: %d" % len(data))
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict")
        self.wfile.write(head + data if self.command != "HEAD" else head)
        self.wfile.flush()

    def send_truncated(self, status, payload, headers):
        data, ctype = self.encode(payload)
        if len(data) < 2:
            data = data + b" " * (64 - len(data))
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for key, value in (headers or {}).items():
            self.send_header(key, str(value))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def send_large(self, size, chunked):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        block = b"x" * 65536
        sent = 0
        try:
            while sent < size:
                n = min(len(block), size - sent)
                if chunked:
                    self.wfile.write(b"%x\r\n" % n + block[:n] + b"\r\n")
                else:
                    self.wfile.write(block[:n])
                sent += n
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def stall(self, bound_s):
        """Answers nothing until the client closes the connection or bound_s passes."""
        deadline = time.time() + bound_s
        self.close_connection = True
        while time.time() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.1)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return
                except OSError:
                    return
                time.sleep(0.05)

    def base_url(self):
        return "http://%s" % (self.headers.get("Host") or "127.0.0.1")

    # ---- routing -------------------------------------------------------------------
    def route(self, method, path, query, body, target, record):
        """Returns (status, payload, headers) or raises HttpError."""
        raw = path.split("/")[1:]
        seg = [urllib.parse.unquote(s) for s in raw]
        if path.startswith("/_control/"):
            return self.control(method, seg[1:], query, body)
        if path.startswith(("/repos/", "/repositories/", "/storage/", "/rest/")):
            return self.store.github.route(self, method, path, query, body)
        if seg[:3] == ["api", "queue", "v1"]:
            return self.queue(method, seg[3:], raw[3:], query, record)
        if seg[:3] == ["api", "hooks", "v1"]:
            return self.hooks(method, seg[3:], query, body, target, record)
        if seg[:3] == ["api", "index", "v1"]:
            return self.index(method, seg[3:], query)
        if seg[:1] == ["api"] and method == "GET":
            return self.treeherder(seg[1:], query)
        raise HttpError(404, {"detail": "Not found."})

    def control(self, method, seg, query, body):
        store = self.store
        name = seg[0] if seg else ""
        data = json.loads(body) if body.strip() else None
        if method == "POST" and name == "reset":
            if isinstance(data, dict) and data.get("data"):
                store.reset_data()
            store.reset_calls()
            return 200, {"ok": True}, None
        if method == "POST" and name == "scenario":
            try:
                store.load_scenario(data)
            except (ValueError, KeyError, OSError) as e:
                raise HttpError(400, {"error": str(e)})
            return 200, {"ok": True}, None
        if method == "POST" and name == "faults":
            try:
                store.add_faults(data)
            except (ValueError, re.error) as e:
                raise HttpError(400, {"error": str(e)})
            return 200, {"ok": True}, None
        if method == "GET" and name == "calls":
            prefix = query.get("path_prefix", [""])[0]
            with store.lock:
                calls = [copy.deepcopy(c) for c in store.calls if c["path"].startswith(prefix)]
            return 200, calls, None
        if method == "GET" and name == "github":
            return 200, store.github.dump(), None
        if method == "GET" and name == "triggers":
            with store.lock:
                return 200, copy.deepcopy(store.triggers), None
        raise HttpError(404, {"error": "unknown control endpoint %s %s" % (method, name)})

    def queue(self, method, seg, raw, query, record):
        store = self.store
        if len(seg) >= 2 and seg[0] == "task-group" and seg[2:] == ["list"] and method == "GET":
            return self.task_group(seg[1], query)
        if len(seg) < 2 or seg[0] != "task":
            raise tc_error(404, "ResourceNotFound", "no such queue endpoint")
        task_id = seg[1]
        with store.lock:
            known = task_id in store.tasks or task_id in store.statuses
        if not known:
            raise tc_error(404, "ResourceNotFound", "`%s` does not correspond to a task that "
                           "exists.\nAre you sure this task exists?" % task_id)
        rest = seg[2:]
        if not rest and method == "GET":
            with store.lock:  # definitions are replaced (put_task), never changed in place
                body = store.task_body(task_id)
            if body is None:
                raise tc_error(404, "ResourceNotFound", "no definition for %s" % task_id)
            return 200, body, {"Content-Type": "application/json; charset=utf-8"}
        if rest == ["status"] and method == "GET":
            return 200, {"status": store.task_status(task_id)}, None
        if rest == ["cancel"] and method == "POST":
            self.authenticate(record)
            return self.cancel(task_id)
        if len(rest) >= 2 and rest[0] == "runs":
            try:
                run_id = int(rest[1])
            except ValueError:
                raise tc_error(400, "InputError", "runId must be an integer")
            if rest[2:] == ["artifacts"] and method == "GET":
                return self.artifact_list(task_id, run_id, query)
            if len(rest) >= 4 and rest[2] == "artifacts" and method == "GET":
                name = urllib.parse.unquote("/".join(raw[5:]))
                return self.artifact(task_id, run_id, name)
        if len(rest) >= 2 and rest[0] == "artifacts" and method == "GET":
            with store.lock:
                runs = sorted(store.artifacts.get(task_id, {}))
            name = urllib.parse.unquote("/".join(raw[3:]))
            return self.artifact(task_id, runs[-1] if runs else 0, name)
        raise tc_error(404, "ResourceNotFound", "no such queue endpoint")

    def artifact_entries(self, task_id, run_id):
        with self.store.lock:
            runs = self.store.artifacts.get(task_id, {})
            status = self.store.task_status(task_id)
            run_ids = {r["runId"] for r in status.get("runs", [])} | set(runs)
            if run_id not in run_ids:
                raise tc_error(404, "ResourceNotFound", "task %s has no run %d" % (task_id, run_id))
            return list(runs.get(run_id, []))

    def artifact_list(self, task_id, run_id, query):
        entries = self.artifact_entries(task_id, run_id)
        limit = page_limit(query, ARTIFACT_PAGE_DEFAULT)
        token = query.get("continuationToken", [None])[0]
        start = decode_token(token) if token else 0
        page = entries[start:start + limit]
        result = {"artifacts": [{k: a[k] for k in ("storageType", "name", "expires", "contentType")}
                                for a in page]}
        if start + limit < len(entries):
            result["continuationToken"] = encode_token(start + limit)
        return 200, result, None

    def artifact(self, task_id, run_id, name):
        for entry in self.artifact_entries(task_id, run_id):
            if entry["name"] == name:
                return 200, entry["content"], {"Content-Type": entry["contentType"]}
        raise tc_error(404, "ResourceNotFound", "Artifact `%s` not found on task `%s` run %d" % (
            name, task_id, run_id))

    def task_group(self, group, query):
        store = self.store
        limit = page_limit(query, TASK_GROUP_PAGE_DEFAULT)
        token = query.get("continuationToken", [None])[0]
        start = decode_token(token) if token else 0
        with store.lock:
            ids = list(store.group_tasks.get(group, {}))
            listed = set(ids)
            ids += [t for t in store.group_statuses.get(group, {}) if t not in listed]
            if not ids:
                raise tc_error(404, "ResourceNotFound",
                               "No task-group with taskGroupId: `%s`" % group)
            # Only the page's tasks, serialized under the lock: definitions and statuses are
            # replaced, never changed in place, so no copy is needed (a deep copy of every
            # definition was most of the fake's time under the classify benchmark).
            result = {"taskGroupId": group,
                      "tasks": [{"status": store.task_status(t), "task": store.tasks.get(t)}
                                for t in ids[start:start + limit]]}
            if start + limit < len(ids):
                result["continuationToken"] = encode_token(start + limit)
            body = json.dumps(result).encode()
        return 200, body, {"Content-Type": "application/json; charset=utf-8"}

    def index(self, method, seg, query):
        """listTasks (GET, and the deprecated POST) and findTask of the index service."""
        store = self.store
        if len(seg) == 2 and seg[0] == "tasks" and method in ("GET", "POST"):
            entries = store.indexed(seg[1])
            limit = page_limit(query, INDEX_PAGE_DEFAULT)
            token = query.get("continuationToken", [None])[0]
            start = decode_token(token) if token else 0
            result = {"tasks": entries[start:start + limit]}
            if start + limit < len(entries):
                result["continuationToken"] = encode_token(start + limit)
            return 200, result, None
        if len(seg) == 2 and seg[0] == "task" and method == "GET" and "." in seg[1]:
            namespace = seg[1].rsplit(".", 1)[0]
            for entry in store.indexed(namespace):
                if entry["namespace"] == seg[1]:
                    return 200, entry, None
            raise tc_error(404, "ResourceNotFound", "Indexed task not found")
        raise tc_error(404, "ResourceNotFound", "no such index endpoint")

    def authenticate(self, record):
        body = self.raw_body
        client_id, reason = self.store.verify_hawk(
            self.headers.get("Authorization"), self.command, self.path,
            self.headers.get("Host"), body, self.headers.get("Content-Type"))
        if record is not None:
            with self.store.lock:
                record["hawk"] = {"clientId": client_id, "valid": reason is None,
                                  "error": reason}
        if reason:
            raise tc_error(401, "AuthenticationFailed", "Hawk authentication failed: " + reason)
        return client_id

    def cancel(self, task_id):
        with self.store.lock:
            status = self.store.task_status(task_id)
            for run in status["runs"]:
                if run.get("state") in ("pending", "running"):
                    run.update(state="exception", reasonResolved="canceled", resolved=now_iso())
            if status["state"] in ("unscheduled", "pending", "running"):
                status["state"] = "exception"
            self.store.put_status(task_id, status)
        return 200, {"status": copy.deepcopy(status)}, None

    def hooks(self, method, seg, query, body, target, record):
        if len(seg) != 4 or seg[0] != "hooks" or seg[3] != "trigger" or method != "POST":
            raise tc_error(404, "ResourceNotFound", "no such hooks endpoint")
        group, hook_id = seg[1], seg[2]
        client_id = self.authenticate(record)
        with self.store.lock:
            known = (group, hook_id) in self.store.hooks
        if not known:
            raise tc_error(404, "ResourceNotFound", "No such hook %s/%s" % (group, hook_id))
        try:
            payload = json.loads(body) if body.strip() else {}
        except ValueError:
            raise tc_error(400, "MalformedPayload", "request body is not JSON")
        status = self.store.create_action_task(group, hook_id, payload, client_id)
        return 200, {"status": status}, None

    def treeherder(self, seg, query):
        store = self.store
        if seg == ["jobs", ""]:
            task_ids = query.get("task_id", [])
            with store.lock:
                if task_ids:
                    wanted = {i: None for t in task_ids for i in store.task_jobs.get(t, {})}
                    jobs = [store.job_view(store.jobs[i]) for i in wanted]
                else:
                    jobs = [store.job_view(j) for j in store.jobs.values()]
            names = store.job_property_names
            return 200, {"count": len(jobs), "next": None, "previous": None,
                         "results": [[j.get(n) for n in names] for j in jobs],
                         "job_property_names": names}, None
        if seg == ["failureclassification", ""]:
            return 200, store.failure_classifications, None
        if seg == ["performance", "framework", ""]:
            return 200, store.frameworks, None
        if seg == ["performance", "alertsummary", ""]:
            return self.alert_summaries(query)
        if len(seg) >= 3 and seg[0] == "project":
            project = seg[1]
            rest = seg[2:]
            if rest == ["job-log-url", ""]:
                return self.job_log_urls(project, query)
            if rest == ["performance", "data", ""]:
                return self.performance_datums(project, query)
            if rest == ["push", ""]:
                return self.push_list(project, query)
            if rest == ["jobs", ""]:
                return self.project_jobs(project, query)
            if len(rest) >= 3 and rest[0] == "jobs" and rest[1].isdigit():
                job = self.find_job(project, int(rest[1]))
                if rest[2:] == [""]:
                    return 200, self.job_detail(project, job), None
                if rest[2:] == ["bug_suggestions", ""]:
                    with store.lock:
                        value = store.bug_suggestions.get(job["id"], store.default_bug_suggestions)
                    return 200, copy.deepcopy(value), None
        raise th_not_found()

    def push_list(self, project, query):
        """The project's pushes, newest first (id__lt, count; Treeherder's own cap 1000)."""
        try:
            before = int(query.get("id__lt", ["0"])[0]) or None
            count = min(int(query.get("count", ["10"])[0]), 1000)
        except ValueError:
            raise HttpError(400, {"detail": "id__lt and count are integers"})
        with self.store.lock:
            pushes = [copy.deepcopy(p) for p in self.store.pushes.get(project, {}).values()
                      if before is None or p["id"] < before]
        pushes.sort(key=lambda p: p["id"], reverse=True)
        return 200, {"meta": {"count": len(pushes[:count]), "repository": project},
                     "results": pushes[:count]}, None

    def project_jobs(self, project, query):
        """The jobs of a push (push_id), optionally of one job_type_name, as a list with
        job_property_names (return_type=list), paged by count and offset."""
        try:
            push_id = int(query.get("push_id", ["0"])[0])
            count = int(query.get("count", ["2000"])[0])
            offset = int(query.get("offset", ["0"])[0])
        except ValueError:
            raise HttpError(400, {"detail": "push_id, count and offset are integers"})
        name = query.get("job_type_name", [None])[0]
        store = self.store
        with store.lock:
            jobs = [store.job_view(j) for j in store.jobs.values()]
        jobs = [j for j in jobs if j.get("push_id") == push_id
                and j.get("project", project) == project
                and (name is None or j.get("job_type_name") == name)]
        jobs.sort(key=lambda j: j["id"])
        names = store.job_property_names
        page = jobs[offset:offset + count]
        return 200, {"results": [[j.get(n) for n in names] for j in page],
                     "job_property_names": names, "meta": {"count": len(page),
                                                           "offset": offset}}, None

    def find_job(self, project, job_id):
        with self.store.lock:
            job = self.store.jobs.get(job_id)
            if job is None:
                raise th_not_found()
            view = self.store.job_view(job)
        if view.get("project") and view["project"] != project:
            raise th_not_found()
        return view

    def job_detail(self, project, job):
        detail = self.store.fixture_json("treeherder/job_detail.json")
        if job["id"] != detail["id"]:
            for key in list(detail):
                if key not in FIXED_JOB_DETAIL_KEYS:
                    detail[key] = None
            detail["build_platform"] = job.get("platform")
            detail["machine_platform_os"] = "-"
            detail["logs"] = [{"name": log["name"], "url": log["url"]}
                              for log in self.log_entries(job)]
            detail["taskcluster_metadata"] = {"task_id": job.get("task_id"),
                                              "retry_id": job.get("retry_id", 0)}
            detail["resource_uri"] = "/api/project/%s/jobs/%d/" % (project, job["id"])
            detail["result_set_id"] = job.get("push_id")
            detail["job_guid"] = "%s/%d" % (job.get("task_id"), int(job.get("retry_id") or 0))
            detail["ref_data_name"] = job.get("signature")
            detail["reason"] = "scheduled"
            detail["who"] = "fake-upstream"
            stamp = int(time.time())
            detail.update(submit_timestamp=stamp - 600, start_timestamp=stamp - 500,
                          end_timestamp=stamp - 10)
        for key, value in job.items():
            if key in detail or key in ("task_id", "retry_id"):
                detail[key] = value
        detail.pop("project", None)
        return detail

    def log_entries(self, job):
        job_id = job["id"]
        with self.store.lock:
            value = self.store.job_logs.get(job_id, "parsed")
        if isinstance(value, list):
            return copy.deepcopy(value)
        base = "%s/api/queue/v1/task/%s/runs/%d/artifacts/" % (
            self.base_url(), job.get("task_id"), int(job.get("retry_id") or 0))
        entries = [{"id": job_id * 10 + 1, "job_id": job_id, "name": "live_backing_log",
                    "url": base + "public/logs/live_backing.log", "parse_status": value}]
        with self.store.lock:
            artifacts = self.store.artifacts.get(job.get("task_id"), {}).get(
                int(job.get("retry_id") or 0), [])
            names = [a["name"] for a in artifacts if a["name"].endswith("_errorsummary.log")]
        for i, name in enumerate(names):
            entries.append({"id": job_id * 10 + 2 + i, "job_id": job_id,
                            "name": "errorsummary_json", "url": base + name,
                            "parse_status": value})
        return entries

    def job_log_urls(self, project, query):
        try:
            job_id = int(query.get("job_id", [""])[0])
        except ValueError:
            raise HttpError(400, {"detail": "job_id must be an integer"})
        job = self.find_job(project, job_id)
        entries = self.log_entries(job)
        if self.store.parse_pending_for(job_id):
            for entry in entries:
                entry["parse_status"] = "pending"
        return 200, entries, None

    def performance_datums(self, project, query):
        try:
            wanted = {key: {int(v) for v in query.get(key, [])}
                      for key in ("signature_id", "push_id", "job_id")}
        except ValueError:
            raise HttpError(400, {"message": "Job id(s) must be specified as integers"})
        if not any(wanted.values()):
            raise HttpError(400, ["Need to specify either signature_id, signatures, push_id, "
                                  "or job_id"])
        result = {}
        with self.store.lock:
            datums = copy.deepcopy(self.store.performance_data)
        for d in datums:
            if d.pop("project") != project or any(
                    values and d[key] not in values for key, values in wanted.items()):
                continue
            result.setdefault(d.pop("signature_hash"), []).append(d)
        return 200, result, None

    def alert_summaries(self, query):
        with self.store.lock:
            summaries = copy.deepcopy(self.store.alert_summaries)
        for key in ("repository", "framework", "status", "id"):
            if key in query:
                wanted = query[key][0]
                summaries = [s for s in summaries if str(s.get(key)) == wanted]
        summaries.sort(key=lambda s: -int(s.get("id", 0)))
        try:
            page = int(query.get("page", ["1"])[0])
            limit = int(query.get("limit", [str(ALERT_PAGE_DEFAULT)])[0])
        except ValueError:
            raise HttpError(400, {"detail": "Invalid page."})
        limit = max(1, limit)
        start = (page - 1) * limit
        if page < 1 or (start >= len(summaries) and page != 1):
            raise HttpError(404, {"detail": "Invalid page."})

        def page_url(n):
            q = {k: v[0] for k, v in query.items()}
            q["page"] = str(n)
            return "%s/api/performance/alertsummary/?%s" % (self.base_url(),
                                                           urllib.parse.urlencode(q))

        return 200, {"count": len(summaries),
                     "next": page_url(page + 1) if start + limit < len(summaries) else None,
                     "previous": page_url(page - 1) if page > 1 else None,
                     "results": summaries[start:start + limit]}, None


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return  # clients that give up (caps, timeouts) are expected here
        super().handle_error(request, client_address)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description="Fake Taskcluster/Treeherder/Perfherder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--fixtures", default=os.path.join(here, "..", "fixtures"))
    parser.add_argument("--scenario")
    parser.add_argument("--quiet", action="store_true", help="no line per request on stderr")
    args = parser.parse_args()

    store = Store(args.fixtures)
    if args.scenario:
        with open(args.scenario) as f:
            store.load_scenario(json.load(f))
    Handler.store = store
    # FAKE_UPSTREAM_QUIET=1: benchmarks keep the line per request out of their figures.
    Handler.quiet = args.quiet or os.environ.get("FAKE_UPSTREAM_QUIET") == "1"
    # The fixtures and the growing call list are long-lived: keep the cyclic collector from
    # walking them again and again (its full passes grow with every recorded call).
    gc.collect()
    gc.freeze()
    gc.set_threshold(50000, 50, 1000)
    server = Server((args.host, args.port), Handler)
    port = server.server_address[1]

    def on_term(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    sys.stderr.write("fake-upstream: listening on http://%s:%d\n" % (args.host, port))
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        if args.port_file:
            try:
                os.unlink(args.port_file)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
