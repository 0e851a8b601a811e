#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_mozlog.sh - `retrig errorsummary` on every line type mozlog's ErrorSummaryFormatter
# writes (tests/fixtures/errorsummary/mozlog/, its own tests' outputs and what its code
# writes for a shutdown failure, an expected crash and a crash before any test), several
# artifacts of one run in either order, and `retrig eligibility` on a crash before any test
# (skip/crash-before-tests, not infra) (issue 30).
set -u
BIN=${RT_TEST_BIN_DIR:?}
FIX=${RT_TEST_FIXTURES_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

# expect NAME STATUS PATTERN -- COMMAND...: exit status and a line matching PATTERN (ERE).
expect() {
    local name=$1 status=$2 pattern=$3
    shift 4
    "$@" >"$work/out" 2>&1
    local got=$?
    if [ "$got" != "$status" ]; then bad "$name: exit $got, expected $status: $(head -c 400 "$work/out")"; return; fi
    if ! grep -Eq -- "$pattern" "$work/out"; then bad "$name: output lacks /$pattern/: $(head -c 600 "$work/out")"; return; fi
    ok "$name"
}

M=$FIX/errorsummary/mozlog
es() { "$BIN/retrig" errorsummary "$@"; }

# mozlog's own test cases, each with the verdict its lines mean.
expect "basic: an unexpected PASS fails its group" 0 \
    '"kind":"test-failure".*"failing_groups":\["manifestA"\],"failures":\[\{"test":"test_baz","subtest":null,"status":"PASS","expected":"FAIL"' \
    -- es "$M/basic.log"
expect "missing_test_end: a null group_result is an unfinished, failing group" 0 \
    '"kind":"test-failure","reason":"test-failure","complete":true.*"failing_groups":\["manifest"\],"failures":\[\{"test":"manifest","subtest":null,"status":"UNFINISHED","expected":"OK","message":null,"group":"manifest"\}\].*"bad_lines":0' \
    -- es "$M/missing_test_end.log"
expect "crash_and_group_status: a CRASH result is a failure" 0 \
    '"kind":"test-failure".*"failures":\[\{"test":"test_bar","subtest":null,"status":"CRASH","expected":"OK"' \
    -- es "$M/crash_and_group_status.log"
expect "fail_expected_fail: expected failures pass" 0 '"kind":"pass".*"failures":\[\]' \
    -- es "$M/fail_expected_fail.log"
expect "timeout_and_crash: two results and the crash with its signature" 0 \
    '"kind":"test-failure".*"subtest":"Test timed out".*"status":"TIMEOUT".*\{"test":"manifestA","subtest":null,"status":"CRASH","expected":"CRASH","message":"signature","group":"manifestA"\}\]' \
    -- es "$M/timeout_and_crash.log"
expect "crash_expected_crash: an expected crash passes" 0 '"kind":"pass".*"failures":\[\]' \
    -- es "$M/crash_expected_crash.log"
expect "assertion_crash_on_shutdown: a crash in an ERROR group fails" 0 \
    '"kind":"test-failure".*"failures":\[\{"test":"manifestA","subtest":null,"status":"CRASH","expected":"CRASH","message":"","group":"manifestA"\}\]' \
    -- es "$M/assertion_crash_on_shutdown.log"
expect "timeout_no_group_status: no group_result is incomplete (infra)" 0 \
    '"kind":"infra","reason":"incomplete-errorsummary".*"incomplete":"no-group-result"' \
    -- es "$M/timeout_no_group_status.log"
expect "group_start_end_duration: an unexpected PASS fails" 0 '"kind":"test-failure".*"failing_groups":\["manifestA"\]' \
    -- es "$M/group_start_end_duration.log"
expect "group_start_end_all_skipped: a SKIP group passes" 0 '"kind":"pass".*"failures":\[\]' \
    -- es "$M/group_start_end_all_skipped.log"
expect "non_manifest_group_names_ignored: passes" 0 '"kind":"pass".*"failures":\[\]' \
    -- es "$M/non_manifest_group_names_ignored.log"

# What the formatter's code writes for the events its tests leave out.
expect "a shutdown failure of no known group (group []) is a failure though every group is OK" 0 \
    '"kind":"test-failure".*"failing_groups":\[\],"failures":\[\{"test":"dom/tests/mochitest/leaks/mochitest.ini","subtest":null,"status":"FAIL","expected":"OK","message":"leakcheck[^"]*","group":""\}\]' \
    -- es "$M/shutdown_failure_unknown_group.log"
expect "a shutdown failure of a known group lists it once, and its FAIL group" 0 \
    '"kind":"test-failure".*"failing_groups":\["manifestA"\],"failures":\[\{"test":"manifestA","subtest":null,"status":"FAIL","expected":"OK","message":"leakcheck[^"]*","group":"manifestA"\}\]' \
    -- es "$M/shutdown_failure_known_group.log"
expect "a crash in a group that ended OK was expected" 0 '"kind":"pass".*"failing_groups":\[\],"failures":\[\]' \
    -- es "$M/expected_crash.log"
expect "a crash before any test is a product crash, not infra" 0 \
    '"kind":"product-crash","reason":"crash-before-tests".*"failures":\[\{"test":"","subtest":null,"status":"CRASH","expected":"CRASH","message":"@ libxul.so \+ 0x2d4e1c0","group":""\}\]' \
    -- es "$M/crash_before_tests.log"
expect "an ERROR log line judges nothing" 0 '"kind":"pass".*"failures":\[\].*"bad_lines":0' \
    -- es "$M/log_error.log"

# Artifacts of one run: a group's result is the worst of its group_results, in any order.
for order in "assertion_crash_on_shutdown fail_expected_fail" "fail_expected_fail assertion_crash_on_shutdown"; do
    set -- $order
    expect "the worst group result wins ($1 then $2)" 0 \
        '"kind":"test-failure".*"failing_groups":\["manifestA"\],"failures":\[\{"test":"manifestA","subtest":null,"status":"CRASH"' \
        -- es "$M/$1.log" "$M/$2.log"
done
printf '%s\n' '{"groups": ["manifest"], "action": "test_groups", "line": 0}' \
    '{"group": "manifest", "status": "OK", "duration": 10, "action": "group_result", "line": 3}' \
    >"$work/manifest_ok.log"
for order in "$M/missing_test_end.log $work/manifest_ok.log" "$work/manifest_ok.log $M/missing_test_end.log"; do
    set -- $order
    expect "an unfinished group stays unfinished next to a chunk where it passed ($(basename "$1") first)" 0 \
        '"kind":"test-failure".*"failing_groups":\["manifest"\],"failures":\[\{"test":"manifest","subtest":null,"status":"UNFINISHED"' \
        -- es "$1" "$2"
done
expect "an expected crash stays expected next to a passing chunk" 0 '"kind":"pass"' \
    -- es "$M/expected_crash.log" "$M/fail_expected_fail.log"

# The worker's rule on a crash before any test: its own reason, not infra.
"$PY" -c "import json, sys
d = json.load(open(sys.argv[1]))
d['exchange'] = d['exchange'].replace('task-completed', 'task-failed')
p = d['payload']
p['status']['state'] = 'failed'
for r in p['status']['runs']:
    r['state'] = 'failed'; r['reasonResolved'] = 'failed'
json.dump(d, open(sys.argv[2], 'w'))" "$FIX/pulse/treeherder_task-completed_GWxTc8p_RUa5_Xo4RtMiCA.json" \
    "$work/failed.json"
elig=(--message "$work/failed.json" --task "$FIX/taskcluster/task_definition_GWxTc8p_RUa5_Xo4RtMiCA.json"
      --pool-prefix terraform-packet/gecko-t-linux)
expect "eligibility: a crash before any test is skip/crash-before-tests" 0 \
    '"verdict": ?"skip".*"reason": ?"crash-before-tests"' \
    -- "$BIN/retrig" eligibility "${elig[@]}" --errorsummary "$M/crash_before_tests.log"
expect "eligibility: a shutdown failure is eligible" 0 '"verdict": ?"retrigger".*"reason": ?"eligible"' \
    -- "$BIN/retrig" eligibility "${elig[@]}" --errorsummary "$M/shutdown_failure_unknown_group.log"
expect "eligibility: an expected crash is no-test-failure" 0 '"reason": ?"no-test-failure"' \
    -- "$BIN/retrig" eligibility "${elig[@]}" --errorsummary "$M/expected_crash.log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
