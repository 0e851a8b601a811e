#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_messages.sh - `retrig eligibility` on messages and tasks as Taskcluster's schemas
# allow them (issue 30, item 4): a task-exception without runId (the deadline passed before
# any run) is skip/exception, not an invalid message; a task whose extra.treeherder has no
# tier is tier 1, as Treeherder reads it, so a tier-1-only policy keeps it.
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

# A file made from a fixture by a Python expression over `d` (the parsed JSON).
derive() {
    local fixture=$1 out=$2 code=$3
    "$PY" -c "import json, sys
d = json.load(open(sys.argv[1]))
$code
json.dump(d, open(sys.argv[2], 'w'))" "$FIX/$fixture" "$out"
}

GWX=GWxTc8p_RUa5_Xo4RtMiCA
es="$FIX/errorsummary/mochitest-browser-chrome_errorsummary.log"
pools=(--pool-prefix terraform-packet/gecko-t-linux)

expect "eligibility: a task-exception without runId is skip/exception" 0 \
    '"verdict": ?"skip".*"reason": ?"exception"' -- \
    "$BIN/retrig" eligibility --message "$FIX/pulse/derived_task-exception_no-run_f8fRfedPSp2-A7M9Zhxe-Q.json" \
    --task "$FIX/taskcluster/task_definition_${GWX}.json" --errorsummary "$es" "${pools[@]}"

derive pulse/treeherder_task-completed_${GWX}.json "$work/failed.json" '
d["exchange"] = d["exchange"].replace("task-completed", "task-failed")
p = d["payload"]
p["status"]["state"] = "failed"
for r in p["status"]["runs"]:
    r["state"] = "failed"; r["reasonResolved"] = "failed"'
derive taskcluster/task_definition_${GWX}.json "$work/no-tier.json" '
del d["extra"]["treeherder"]["tier"]'
expect "eligibility: a task without a tier is tier 1" 0 '"reason": ?"eligible"' -- \
    "$BIN/retrig" eligibility --message "$work/failed.json" --task "$work/no-tier.json" \
    --errorsummary "$es" "${pools[@]}" --tier 1
expect "eligibility: ... and skipped by a policy without tier 1" 0 '"reason": ?"tier"' -- \
    "$BIN/retrig" eligibility --message "$work/failed.json" --task "$work/no-tier.json" \
    --errorsummary "$es" "${pools[@]}" --tier 2
expect "eligibility: the recorded tier 2 stays tier 2" 0 '"reason": ?"tier"' -- \
    "$BIN/retrig" eligibility --message "$work/failed.json" \
    --task "$FIX/taskcluster/task_definition_${GWX}.json" --errorsummary "$es" "${pools[@]}" --tier 1

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
