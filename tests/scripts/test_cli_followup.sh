#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_followup.sh - `retrig followup`: the follow-up of a backfill replayed from its
# facts (the answer retrig-perf would record), and clear errors for unusable facts.
set -u
BIN=${RT_TEST_BIN_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

# answer NAME FACTS-JSON STATE REASON: retrig followup prints that state and reason.
answer() {
    printf '%s\n' "$2" >"$work/facts.json"
    local out
    out=$("$BIN/retrig" followup --facts "$work/facts.json" 2>&1)
    if "$PY" -c '
import json, sys
d = json.loads(sys.argv[1])
want_reason = None if sys.argv[3] == "-" else sys.argv[3]
assert d["state"] == sys.argv[2], d
assert d.get("reason") == want_reason, d
assert isinstance(d["detail"], str) and d["detail"], d
' "$out" "$3" "$4"; then ok "$1"; else bad "$1: $out"; fi
}
base='"action_task_valid": true, "action_task_known": true, "action_task_id": "AAAAAAAAAAAAAAAAAAAAAA", "window_hours": 24, "now": 1700000000'
answer "the action task still runs" "{$base, \"action_state\": \"running\"}" pending -
answer "... past the window" "{$base, \"action_state\": \"running\", \"expired\": true}" failed deadline-exceeded
answer "an unknown action task" '{"action_task_valid": true, "action_task_id": "AAAAAAAAAAAAAAAAAAAAAA"}' pending -
answer "jobs failed" "{$base, \"action_state\": \"completed\", \"jobs\": 4, \"completed\": 3, \"failed\": 1}" failed jobs-failed
answer "every job completed: the data is asked" "{$base, \"action_state\": \"completed\", \"jobs\": 4, \"completed\": 4}" need-data -
answer "with data" "{$base, \"action_state\": \"completed\", \"jobs\": 4, \"completed\": 4, \"data_known\": true, \"data_found\": true}" done -
answer "without data after the window" "{$base, \"action_state\": \"completed\", \"jobs\": 4, \"completed\": 4, \"data_known\": true, \"expired\": true}" failed no-data

printf '{"jobs": "four"}\n' >"$work/bad.json"
"$BIN/retrig" followup --facts "$work/bad.json" >"$work/out" 2>&1
[ $? -eq 1 ] && grep -q "jobs" "$work/out" && ok "unusable facts are refused naming the field" || bad "bad facts: $(cat "$work/out")"
printf '{"jobs": 1' >"$work/cut.json"
"$BIN/retrig" followup --facts "$work/cut.json" >/dev/null 2>&1
[ $? -eq 1 ] && ok "cut JSON fails" || bad "cut JSON did not exit 1"
"$BIN/retrig" followup --facts "$work/none.json" >"$work/out" 2>&1
[ $? -eq 1 ] && grep -q "none.json" "$work/out" && ok "a missing file is named" || bad "missing file: $(cat "$work/out")"
"$BIN/retrig" followup >/dev/null 2>&1
[ $? -eq 2 ] && ok "no --facts is a usage error" || bad "no --facts did not exit 2"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
