# SPDX-License-Identifier: MPL-2.0
"""Checks queue-schemas/: every schema is a valid JSON Schema, every example validates against
its schema (examples/<schema name>/*.json), the Taskcluster examples are faithful copies of the
recorded real messages in tests/fixtures, deliberately broken copies do NOT validate, and the
messages the core's builders write (common/core/messages.h, events.h, culprit_flow.h) validate:
tests/unit/test_messages.c dumps them when run with RT_MESSAGES_DUMP_DIR.

Run by ctest with /usr/bin/python3; env RT_TEST_SOURCE_DIR (repo root) and RT_TEST_FIXTURES_DIR
(tests/fixtures) default to paths relative to this file, RT_TEST_MESSAGES (the unit test binary)
to build/tests/unit_test_messages. Prints 'N passed, M failed'.
"""
import copy
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("RT_TEST_SOURCE_DIR", HERE.parent.parent))
FIXTURES = pathlib.Path(os.environ.get("RT_TEST_FIXTURES_DIR", SOURCE / "tests" / "fixtures"))
SCHEMAS = SOURCE / "queue-schemas"

TASKCLUSTER_MESSAGES = ["taskcluster-task-completed", "taskcluster-task-failed",
                        "taskcluster-task-exception"]
OURS = ["retrigger-request", "decide-request", "decision-event", "culprit-probe-request",
        "culprit-event"]

passed = 0
failed = 0


def check(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}{': ' + detail if detail else ''}")


# jsonschema's own date-time check needs an optional package Debian 12 does not install, so it
# would silently accept anything: check RFC 3339 date-times ourselves.
FORMATS = jsonschema.FormatChecker(formats=())


@FORMATS.checks("date-time", raises=ValueError)
def _is_datetime(value):
    if not isinstance(value, str):
        return True
    if "T" not in value or not (value.endswith("Z") or (len(value) > 6 and value[-6] in "+-")):
        raise ValueError("not an RFC 3339 date-time with zone")
    datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def schema_store():
    store = {}
    for p in sorted(SCHEMAS.glob("*.json")):
        store[p.resolve().as_uri()] = load(p)
    return store


STORE = schema_store()


def validator(name):
    path = (SCHEMAS / f"{name}.json").resolve()
    schema = STORE[path.as_uri()]
    cls = jsonschema.validators.validator_for(schema)
    resolver = jsonschema.RefResolver(base_uri=path.as_uri(), referrer=schema, store=STORE)
    return cls(schema, resolver=resolver, format_checker=FORMATS)


def errors(name, instance):
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in validator(name).iter_errors(instance)]


def examples(name):
    return sorted((SCHEMAS / "examples" / name).glob("*.json"))


def test_every_schema_is_valid_json_schema():
    check(len(STORE) >= 9, "queue-schemas holds the 9 schemas", f"found {len(STORE)}")
    for uri, schema in STORE.items():
        name = pathlib.Path(uri).name
        cls = jsonschema.validators.validator_for(schema, default=None)
        check(cls is not None and schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema",
              f"{name} declares draft 2020-12")
        try:
            cls.check_schema(schema)
            check(True, f"{name} is a valid schema")
        except jsonschema.SchemaError as e:
            check(False, f"{name} is a valid schema", e.message)
        check(bool(schema.get("description")), f"{name} has a description")


def test_every_example_validates():
    for name in TASKCLUSTER_MESSAGES + OURS:
        exs = examples(name)
        check(len(exs) >= 1, f"{name} has examples")
        for p in exs:
            errs = errors(name, load(p))
            check(not errs, f"{name} accepts example {p.name}", "; ".join(errs))


def test_taskcluster_examples_are_the_recorded_fixtures():
    """The Taskcluster examples must stay the real bodies: compare with tests/fixtures."""
    pulse = FIXTURES / "pulse"
    if not pulse.is_dir():
        check(False, "fixtures directory present", str(pulse))
        return
    for name in ["taskcluster-task-completed", "taskcluster-task-exception"]:
        for p in examples(name):
            fixture = load(pulse / p.name)
            body = fixture.get("payload", fixture) if "exchange" in fixture else fixture
            check(load(p) == body, f"{name}/{p.name} equals the fixture's message body")
            if "exchange" in fixture:
                check(fixture["exchange"].endswith(name.replace("taskcluster-", "")),
                      f"{p.name} was recorded from the {name} exchange", fixture["exchange"])
    # No real task-failed body exists: the examples are real task-completed bodies with only the
    # state fields changed, as the fixtures README describes.
    for p in examples("taskcluster-task-failed"):
        src = p.name.removeprefix("derived-from_")
        fixture = load(pulse / src)
        body = copy.deepcopy(fixture.get("payload", fixture))
        body["status"]["state"] = "failed"
        body["status"]["runs"][-1]["state"] = "failed"
        body["status"]["runs"][-1]["reasonResolved"] = "failed"
        check(load(p) == body, f"taskcluster-task-failed/{p.name} differs from {src} only in state")
    # And every recorded completed/exception body in the fixtures validates directly.
    for p in sorted(pulse.glob("*_task-completed_*.json")) + sorted(pulse.glob("*_task-exception_*.json")):
        fixture = load(p)
        body = fixture.get("payload", fixture) if "exchange" in fixture else fixture
        name = "taskcluster-task-completed" if "completed" in p.name else "taskcluster-task-exception"
        errs = errors(name, body)
        check(not errs, f"{name} accepts fixture {p.name}", "; ".join(errs))


def must_reject(name, instance, what):
    errs = errors(name, instance)
    check(bool(errs), f"{name} rejects {what}", "validated but should not")


def test_broken_taskcluster_messages_are_rejected():
    # 2019 body: provisionerId/workerType only, no taskQueueId/projectId.
    old = load(SCHEMAS / "examples" / "taskcluster-task-completed" /
               "treeherder_task-completed_B3EheQ-IQ5aPzw34KS_a6g.json")
    modern = load(SCHEMAS / "examples" / "taskcluster-task-completed" /
                  "fuzzmanager_task-completed_Z1kaoRtHRRWyyuMDqadYPA.json")
    exc = load(examples("taskcluster-task-exception")[0])

    m = copy.deepcopy(old); del m["workerId"]
    must_reject("taskcluster-task-completed", m, "a message without workerId")
    m = copy.deepcopy(old); m["runId"] = "0"
    must_reject("taskcluster-task-completed", m, "a string runId")
    m = copy.deepcopy(old); m["version"] = 2
    must_reject("taskcluster-task-completed", m, "version 2")
    m = copy.deepcopy(old); m["surprise"] = True
    must_reject("taskcluster-task-completed", m, "an unknown top-level property")
    m = copy.deepcopy(old); del m["status"]["provisionerId"]
    must_reject("taskcluster-task-completed", m,
                "a status with neither taskQueueId nor provisionerId+workerType")
    m = copy.deepcopy(modern); del m["status"]["provisionerId"]; del m["status"]["workerType"]
    errs = errors("taskcluster-task-completed", m)
    check(not errs, "taskcluster-task-completed accepts taskQueueId without provisionerId/workerType",
          "; ".join(errs))
    m = copy.deepcopy(modern); m["status"]["taskQueueId"] = "proj-fuzzing.linux-pool10"
    must_reject("taskcluster-task-completed", m, "a malformed taskQueueId")
    m = copy.deepcopy(modern); m["status"]["runs"][0]["state"] = "done"
    must_reject("taskcluster-task-completed", m, "an unknown run state")
    m = copy.deepcopy(modern); m["status"]["taskId"] = "not-a-slugid"
    must_reject("taskcluster-task-completed", m, "a taskId that is not a slugid")
    m = copy.deepcopy(modern); m["status"]["deadline"] = "yesterday"
    must_reject("taskcluster-task-completed", m, "a deadline that is not a date-time")
    m = copy.deepcopy(modern); m["task"]["tags"]["kind"] = 7
    must_reject("taskcluster-task-completed", m, "a non-string task tag")
    m = copy.deepcopy(modern); m["workerGroup"] = "x" * 39
    must_reject("taskcluster-task-completed", m, "a workerGroup longer than 38")
    must_reject("taskcluster-task-completed", exc, "an exception body (no workerGroup/workerId)")
    m = copy.deepcopy(exc); del m["status"]
    must_reject("taskcluster-task-exception", m, "a message without status")
    m = copy.deepcopy(exc); m["status"]["runs"][0]["reasonResolved"] = "bored"
    must_reject("taskcluster-task-exception", m, "an unknown reasonResolved")
    f = load(examples("taskcluster-task-failed")[0]); del f["runId"]
    must_reject("taskcluster-task-failed", f, "a message without runId")


def test_broken_messages_of_ours_are_rejected():
    r = load(SCHEMAS / "examples" / "retrigger-request" / "test-failures.json")
    for field in ["set_id", "task_id", "times", "failures", "task_queue_id"]:
        m = copy.deepcopy(r); del m[field]
        must_reject("retrigger-request", m, f"a request without {field}")
    for field, value, what in [("times", 0, "times 0"), ("times", 21, "times 21"),
                               ("round", 0, "round 0"), ("round", "2", "round as a string"),
                               ("times", "3", "times as a string"), ("version", 2, "version 2"),
                               ("revision", "b437ae03", "a short revision"),
                               ("requested_at", "2019-06-26 19:36", "a date without zone"),
                               ("run_id", -1, "a negative run_id"),
                               ("failing_groups", "a.ini", "failing_groups as a string"),
                               ("extra", 1, "an unknown property")]:
        m = copy.deepcopy(r); m[field] = value
        must_reject("retrigger-request", m, what)
    m = copy.deepcopy(r); del m["failures"][0]["status"]
    must_reject("retrigger-request", m, "a failure without status")
    m = copy.deepcopy(r); m["failures"][0]["subtest"] = 5
    must_reject("retrigger-request", m, "a numeric subtest")

    d = load(SCHEMAS / "examples" / "decide-request" / "set-complete.json")
    m = copy.deepcopy(d); del m["attempt"]
    must_reject("decide-request", m, "a request without attempt")
    m = copy.deepcopy(d); m["attempt"] = 0
    must_reject("decide-request", m, "attempt 0")
    m = copy.deepcopy(d); m["project"] = "Auto Land"
    must_reject("decide-request", m, "a malformed project")

    e = load(SCHEMAS / "examples" / "decision-event" / "regression.json")
    m = copy.deepcopy(e); m["verdict"] = "flaky"
    must_reject("decision-event", m, "an unknown verdict")
    m = copy.deepcopy(e); del m["decided_at"]
    must_reject("decision-event", m, "an event without decided_at")
    m = copy.deepcopy(e); m["lines"][0]["reproduced_by"] = 3
    must_reject("decision-event", m, "reproduced_by as a number")
    m = copy.deepcopy(e); m["retrigger_task_ids"] = "abc"
    must_reject("decision-event", m, "retrigger_task_ids as a string")

    c = load(SCHEMAS / "examples" / "culprit-probe-request" / "bisect-round-1.json")
    m = copy.deepcopy(c); del m["attempt"]
    must_reject("culprit-probe-request", m, "a probe without attempt")
    m = copy.deepcopy(c); m["kind"] = "retrigger"
    must_reject("culprit-probe-request", m, "another kind")
    m = copy.deepcopy(c); m["times"] = 101
    must_reject("culprit-probe-request", m, "times over add-new-jobs' 100")
    m = copy.deepcopy(c); m["revision"] = m["revision"][:12]
    must_reject("culprit-probe-request", m, "a short revision")

    c = load(SCHEMAS / "examples" / "culprit-event" / "found-bisected.json")
    m = copy.deepcopy(c); m["status"] = "searching"
    must_reject("culprit-event", m, "a search still under way")
    m = copy.deepcopy(c); del m["culprit"]["url"]
    must_reject("culprit-event", m, "a culprit without its link")
    m = copy.deepcopy(c); m["range"] = m["range"][:1]
    must_reject("culprit-event", m, "a range of one push")


def test_built_messages_validate():
    """What the core builds, from crafted structs and from each example parsed back, validates;
    a message built from an example is that example."""
    binary = pathlib.Path(os.environ.get("RT_TEST_MESSAGES",
                                         SOURCE / "build" / "tests" / "unit_test_messages"))
    if not binary.is_file():
        check(False, "the message builders' test binary exists", str(binary))
        return
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run([str(binary)], env={**os.environ, "RT_MESSAGES_DUMP_DIR": out},
                             capture_output=True, text=True, timeout=60)
        check(run.returncode == 0, "unit_test_messages passes while dumping",
              run.stdout[-2000:] + run.stderr[-2000:])
        for name in OURS:
            built = sorted((pathlib.Path(out) / name).glob("*.json"))
            check(len(built) >= len(examples(name)), f"{name}: the builders wrote messages",
                  f"{len(built)} files")
            for p in built:
                message = load(p)
                errs = errors(name, message)
                check(not errs, f"{name} accepts built {p.name}", "; ".join(errs))
                if p.name.startswith("example-"):
                    example = SCHEMAS / "examples" / name / p.name.removeprefix("example-")
                    check(message == load(example), f"{name}: {example.name} built back is itself")
            if name != "decide-request" and name != "culprit-probe-request":
                check(any(not p.name.startswith("example-") for p in built),
                      f"{name}: a message built from typed values is checked too")


def test_readme_describes_every_schema():
    readme = (SCHEMAS / "README.md").read_text(encoding="utf-8")
    for name in TASKCLUSTER_MESSAGES + OURS + ["taskcluster-task-status"]:
        check(f"{name}.json" in readme, f"README.md describes {name}.json")


def main():
    for test in [test_every_schema_is_valid_json_schema, test_every_example_validates,
                 test_taskcluster_examples_are_the_recorded_fixtures,
                 test_broken_taskcluster_messages_are_rejected,
                 test_broken_messages_of_ours_are_rejected, test_built_messages_validate,
                 test_readme_describes_every_schema]:
        try:
            test()
        except Exception as e:  # a crash in one group must not hide the others
            check(False, test.__name__, f"{type(e).__name__}: {e}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
