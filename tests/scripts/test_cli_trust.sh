#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_trust.sh - what an untrusted push may make retrig do, from the command line:
# `retrig eligibility` skips a failure on a try push (skip/project) and keeps an autoland
# one; `retrig render-action` prints the hook call the recorded actions.json gives for its
# own push, and prints the refusal (exit 1) when actions.json names a hook of another group,
# a release-promotion hook, a path out of the hook, or another push, or when its template
# swaps the callback or ignores the input; the input replayed is each worker's; the per-level
# credential keys are secrets and a level's client id goes with its token.
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
failed_message='
d["exchange"] = d["exchange"].replace("task-completed", "task-failed")
p = d["payload"]
p["status"]["state"] = "failed"
for r in p["status"]["runs"]:
    r["state"] = "failed"; r["reasonResolved"] = "failed"'
derive pulse/treeherder_task-completed_${GWX}.json "$work/failed.json" "$failed_message"
derive taskcluster/task_definition_${GWX}.json "$work/try-task.json" '
d["routes"] = ["tc-treeherder.v2.try.5f2bd4a1c8d8a6c3b1e0f9a7d6c5b4a3e2d1c0b9.1234567"]
d["schedulerId"] = "gecko-level-1"'
es="$FIX/errorsummary/mochitest-browser-chrome_errorsummary.log"
pools=(--pool-prefix terraform-packet/gecko-t-linux)

expect "eligibility: an autoland failure is eligible" 0 '"reason": ?"eligible"' -- \
    "$BIN/retrig" eligibility --message "$work/failed.json" \
    --task "$FIX/taskcluster/task_definition_${GWX}.json" --errorsummary "$es" "${pools[@]}"
expect "eligibility: a try push is skip/project" 0 '"reason": ?"project"' -- \
    "$BIN/retrig" eligibility --message "$work/failed.json" --task "$work/try-task.json" \
    --errorsummary "$es" "${pools[@]}"
expect "eligibility: try only when the operator lists it" 0 '"reason": ?"eligible"' -- \
    env RETRIG_PROJECTS="autoland, try" "$BIN/retrig" eligibility --message "$work/failed.json" \
    --task "$work/try-task.json" --errorsummary "$es" "${pools[@]}"
expect "projects without a trust level is a configuration error" 2 "'elm' has no trust level" -- \
    env RETRIG_PROJECTS="autoland, elm" "$BIN/retrig" config

# The recorded actions.json is push f7Jj_h6MTEKr5Ln_7aFqbw's (autoland c7766d0b); a task of
# that push is the recorded GWxTc8p one moved there.
derive taskcluster/task_definition_${GWX}.json "$work/task.json" '
d["taskGroupId"] = "f7Jj_h6MTEKr5Ln_7aFqbw"
d["routes"] = ["tc-treeherder.v2.autoland.c7766d0b4a121985a8b07e6721d66ccab57bbf76.109591"]'
render() { "$BIN/retrig" render-action --actions "$1" --task "${2:-$work/task.json}" --task-id $GWX "${@:3}"; }
expect "render-action: the push's own retrigger hook" 0 '"hookId": "in-tree-action-3-generic/9353e8f146"' -- \
    render "$FIX/taskcluster/actions.json"
if grep -q '"refused"' "$work/out"; then bad "an allowed call printed a refusal"; else ok "no refusal for the push's own hook"; fi

foreign() { # NAME PYTHON-EDIT-OF-EACH-ACTION-a PATTERN
    derive taskcluster/actions.json "$work/foreign.json" "
for a in d['actions']:
    $2"
    expect "render-action refuses $1" 1 "$3" -- render "$work/foreign.json"
    grep -q '"refused"' "$work/out" || bad "$1: no refusal printed"
}
foreign "a hook of another group" 'a["hookGroupId"] = "project-releng"' '"code": "hook-group"'
foreign "a release-promotion hook" 'a["hookId"] = "in-tree-action-3-release-promotion/abc"' \
    'is not in-tree-action-3-generic/<hash>'
foreign "a path out of the hooks" 'a["hookId"] = "../../../auth/v1"' '"code": "hook-id"'
foreign "a payload for another decision task group" \
    'a["hookPayload"]["decision"]["action"]["taskGroupId"] = "HkX-TbGXQaSX4ucqGMQNBA"' '"code": "task-group"'
foreign "a callback that is not the action's (cancel-all)" \
    'a["hookPayload"]["decision"]["action"]["cb_name"] = "cancel-all"' '"code": "action"'
foreign "a payload naming another action" \
    'a["hookPayload"]["decision"]["action"]["name"] = "cancel-all"' '"code": "action"'
foreign "a template that ignores the input (200 labels x 100 runs)" \
    'a["hookPayload"]["user"]["input"] = {"requests": [{"tasks": ["t%d" % i for i in range(200)], "times": 100}]}' \
    '"code": "input"'

# The input is the one each worker sends: add-new-jobs (a culprit probe) names the task's
# label, backfill its depth; the payload carries exactly that input.
label="test-android-em-7.0-x86_64/debug-mochitest-e10s-1"
payload_input() { "$PY" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["payload"]["user"]["input"], sort_keys=True))' "$work/out"; }
render "$FIX/taskcluster/actions.json" "$work/task.json" --action add-new-jobs --times 3 >"$work/out" 2>/dev/null
got=$(payload_input)
if [ "$got" = "{\"tasks\": [\"$label\"], \"times\": 3}" ]; then ok "add-new-jobs renders the probe's tasks and times"; else bad "add-new-jobs input: $got"; fi
render "$FIX/taskcluster/actions.json" "$work/task.json" --action backfill --depth 4 >"$work/out" 2>/dev/null
got=$(payload_input)
if [ "$got" = '{"depth": 4, "times": 1}' ]; then ok "backfill renders perf's depth and times"; else bad "backfill input: $got"; fi
render "$FIX/taskcluster/actions.json" "$work/task.json" --action retrigger --times 2 >"$work/out" 2>/dev/null
got=$(payload_input)
if [ "$got" = '{"times": 2}' ]; then ok "retrigger renders the times"; else bad "retrigger input: $got"; fi
derive taskcluster/task_definition_${GWX}.json "$work/other-push.json" '
d["taskGroupId"] = "f7Jj_h6MTEKr5Ln_7aFqbw"'
expect "render-action refuses a task of another push" 1 '"code": "push"' -- \
    render "$FIX/taskcluster/actions.json" "$work/other-push.json"
expect "render-action refuses a try task (level 1) the level-3 hook" 1 '"code": "hook-id"' -- \
    render "$FIX/taskcluster/actions.json" "$work/try-task.json"
derive taskcluster/task_definition_${GWX}.json "$work/level1.json" '
d["taskGroupId"] = "f7Jj_h6MTEKr5Ln_7aFqbw"
d["schedulerId"] = "gecko-level-1"
d["routes"] = ["tc-treeherder.v2.autoland.c7766d0b4a121985a8b07e6721d66ccab57bbf76.109591"]'
expect "render-action refuses a task of another level" 1 '"code": "scheduler"' -- \
    render "$FIX/taskcluster/actions.json" "$work/level1.json"

token=TcLeVeL3-ToKeN-81f2a9
expect "a level's token is a secret" 0 "taskcluster_access_token_level3 = \*\*\*" -- \
    env RETRIG_TASKCLUSTER_CLIENT_ID_LEVEL3=project/retrig/l3 \
    RETRIG_TASKCLUSTER_ACCESS_TOKEN_LEVEL3="$token" "$BIN/retrig" config
if grep -q -- "$token" "$work/out"; then bad "the level-3 token was printed"; else ok "level-3 token never printed"; fi
expect "a level's client id without its token is refused" 2 "taskcluster_client_id_level1" -- \
    env RETRIG_TASKCLUSTER_CLIENT_ID_LEVEL1=project/retrig/l1 "$BIN/retrig" config

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
