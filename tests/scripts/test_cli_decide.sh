#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_decide.sh - `retrig decide` on the recorded bug_suggestions fixture: retriggers
# built from it (the same lines, the same lines with harness noise, some lines dropped, an
# unrelated failure) give regression or intermittent; single tracking bugs; a reftest failure
# and crash lines in each layout (issue 30); exit codes and usage errors.
set -u
BIN=${RT_TEST_BIN_DIR:?}
FIX=${RT_TEST_FIXTURES_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
# Only our own variables: an unknown RETRIG_* variable is itself a configuration error.
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
orig="$FIX/treeherder/bug_suggestions.json"

# Retriggers derived from the fixture, changing as little as possible.
"$PY" - "$orig" "$work" <<'PYEOF' || { echo "FAIL - cannot build inputs"; exit 1; }
import copy, json, sys
src, out = sys.argv[1], sys.argv[2]
data = json.load(open(src))
def save(name, doc):
    json.dump(doc, open(f"{out}/{name}.json", "w"), indent=2)
unexpected = [i for i, e in enumerate(data) if e["search"].startswith("TEST-UNEXPECTED-")]
save("same", data)
# The same failures as another run prints them: mozharness and GECKO(pid) prefixes, ANSI.
noisy = copy.deepcopy(data)
for i in unexpected:
    noisy[i]["search"] = "08:15:42     INFO - GECKO(31337) | \x1b[31m" + noisy[i]["search"] + "\x1b[0m"
save("noisy", noisy)
# Only the second failure line reproduced.
save("one", [e for i, e in enumerate(data) if i not in unexpected or i == unexpected[1]])
# A retrigger that failed differently: the fixture's lines dropped, another failure added.
other = [e for i, e in enumerate(data) if i not in unexpected]
other.append({"search": "TEST-UNEXPECTED-TIMEOUT | dom/other/test_unrelated.html | Test timed out.",
              "search_terms": ["test_unrelated.html"], "path_end": "dom/other/test_unrelated.html",
              "bugs": {"open_recent": [], "all_others": []}})
save("other", other)
# The original with no TEST-UNEXPECTED line at all.
save("nolines", [e for i, e in enumerate(data) if i not in unexpected])
# An open single tracking bug for the second line's test, as Treeherder's bug filer names it.
stb = copy.deepcopy(data)
test = stb[unexpected[1]]["path_end"]
stb[unexpected[1]]["bugs"]["open_recent"].append({
    "id": 1700001, "status": "NEW", "resolution": "", "dupe_of": None, "crash_signature": "",
    "summary": f"Intermittent {test} | single tracking bug",
    "keywords": "intermittent-failure,intermittent-testcase", "whiteboard": "",
    "internal_id": 99, "occurrences": None})
save("stb", stb)
bad = copy.deepcopy(data)
bad[0]["bugs"]["open_recent"] = {"id": 1}
save("badtype", bad)
open(f"{out}/notjson.json", "w").write('[{"search": "TEST-UNEXPECTED-FAIL | a | b"')
PYEOF

# decide NAME EXPECTED_STATUS CHECK -- ARGS...: runs retrig decide; CHECK is a Python
# expression over `o`, the printed JSON (skipped when the status is not 0).
decide() {
    local name=$1 status=$2 check=$3; shift 4
    "$BIN/retrig" decide "$@" >"$work/out" 2>"$work/err"; local got=$?
    if [ "$got" != "$status" ]; then
        bad "$name: exit $got, expected $status: $(head -c 400 "$work/out" "$work/err")"; return
    fi
    if [ "$status" = 0 ] && ! "$PY" -c 'import json, sys
o = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$work/out" "$check"; then
        bad "$name: $check is false for $(head -c 600 "$work/out")"; return
    fi
    if [ "$status" != 0 ] && ! grep -Eq -- "$check" "$work/err"; then
        bad "$name: stderr lacks /$check/: $(head -c 400 "$work/err")"; return
    fi
    ok "$name"
}

decide "two reproducing retriggers: regression, every line reproduced twice" 0 \
    'o["verdict"] == "regression" and o["reason"] == "reproduced" and len(o["lines"]) == 4 and all(l["reproduced"] == 2 for l in o["lines"])' \
    -- --original "$orig" --retrigger "$work/same.json" --retrigger "$work/same.json"
decide "harness noise in a retrigger still reproduces" 0 \
    'o["verdict"] == "regression" and [l["reproduced"] for l in o["lines"]] == [1, 2, 1, 1]' \
    -- --original "$orig" --retrigger "$work/one.json" --retrigger "$work/noisy.json"
decide "one reproduction and three passes: intermittent" 0 \
    'o["verdict"] == "intermittent" and o["reason"] == "not-reproduced" and all(l["reproduced"] == 1 for l in o["lines"])' \
    -- --original "$orig" --retrigger "$work/same.json" --passed 3
decide "retriggers failing differently reproduce nothing: intermittent" 0 \
    'o["verdict"] == "intermittent" and all(l["reproduced"] == 0 for l in o["lines"])' \
    -- --original "$orig" --retrigger "$work/other.json" --retrigger "$work/other.json"
decide "all retriggers passed: intermittent" 0 \
    'o["verdict"] == "intermittent" and o["lines"][0]["line"].startswith("TEST-UNEXPECTED-FAIL | devtools/")' \
    -- --original "$orig" --passed 5
decide "lines are compared separately, not summed" 0 \
    'o["verdict"] == "intermittent" and [l["reproduced"] for l in o["lines"]] == [0, 1, 0, 0]' \
    -- --original "$orig" --retrigger "$work/one.json" --retrigger "$work/other.json"
decide "--threshold 1: one reproduction is a regression" 0 'o["verdict"] == "regression"' \
    -- --original "$orig" --retrigger "$work/one.json" --passed 4 --threshold 1
decide "--threshold 3: two reproductions and a pass are intermittent" 0 'o["verdict"] == "intermittent"' \
    -- --original "$orig" --retrigger "$work/same.json" --retrigger "$work/same.json" --passed 1 --threshold 3
RETRIG_DECIDE_THRESHOLD=1 "$BIN/retrig" decide --original "$orig" --retrigger "$work/one.json" >"$work/out" 2>&1
grep -q '"verdict":"regression"' "$work/out" && ok "RETRIG_DECIDE_THRESHOLD=1 is used" \
    || bad "RETRIG_DECIDE_THRESHOLD=1 ignored: $(head -c 300 "$work/out")"
decide "no retriggers at all: undecided" 0 \
    'o["verdict"] == "undecided" and o["reason"] == "no-usable-retriggers"' -- --original "$orig"
decide "original without TEST-UNEXPECTED lines: undecided" 0 \
    'o["verdict"] == "undecided" and o["reason"] == "no-failure-lines" and o["lines"] == []' \
    -- --original "$work/nolines.json" --retrigger "$orig" --retrigger "$orig"
# Issue 17, item 4: a single tracking bug is context; the line is compared like any other.
decide "a line with an open single tracking bug is kept and listed as tracked" 0 \
    'len(o["lines"]) == 4 and o["tracked"][0]["bug"] == 1700001 and "browser_suspend_videos" in o["tracked"][0]["line"]' \
    -- --original "$work/stb.json" --retrigger "$work/one.json" --retrigger "$work/one.json"
decide "... and when it alone reproduces, it is a regression: reproduced-known-intermittent" 0 \
    'o["verdict"] == "regression" and o["reason"] == "reproduced-known-intermittent"' \
    -- --original "$work/stb.json" --retrigger "$work/one.json" --retrigger "$work/one.json"
RETRIG_DECIDE_DROP_SINGLE_TRACKING=false "$BIN/retrig" decide --original "$work/stb.json" >"$work/out" 2>&1
status=$?
[ "$status" = 2 ] && grep -q "decide_drop_single_tracking' was removed" "$work/out" \
    && ok "the removed key decide_drop_single_tracking is refused, saying why" \
    || bad "removed key: exit $status: $(head -c 300 "$work/out")"

# Issue 30, items 1 and 2: a reftest failure, whose line Treeherder keeps with its "REFTEST"
# label, and crash lines in mozcrash's layouts (fixtures/treeherder/bug_suggestions_{reftest,
# crash}.json, built from Treeherder's sample reftest and xpcshell logs).
reftest="$FIX/treeherder/bug_suggestions_reftest.json"
crash="$FIX/treeherder/bug_suggestions_crash.json"
"$PY" - "$reftest" "$crash" "$work" <<'PYEOF' || { echo "FAIL - cannot build issue 30 inputs"; exit 1; }
import copy, json, sys
reftest, crash, out = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def save(name, doc):
    json.dump(doc, open(f"{out}/{name}.json", "w"), indent=2)
# The same reftest failure as mozlog prints it without the label, and behind mozharness and a
# mochitest-style counter.
relabelled = copy.deepcopy(reftest)
relabelled[0]["search"] = relabelled[0]["search"].replace("REFTEST ", "", 1)
save("reftest_nolabel", relabelled)
relabelled[0]["search"] = "21:27:46     INFO - 596 INFO " + relabelled[0]["search"]
save("reftest_counter", relabelled)
# The same crashes in the older layout (test first), and with a pid where the test was.
older = copy.deepcopy(crash)
for e in older[:2]:
    head, sig, test = e["search"].split(" | ")
    e["search"] = " | ".join([head, test, sig])
save("crash_older", older)
# Another test crashing with the same signature.
moved = copy.deepcopy(crash)
for e in moved[:2]:
    e["search"] = e["search"].rsplit(" | ", 1)[0] + " | dom/other/test_unrelated.js"
save("crash_elsewhere", moved)
# An open single tracking bug for the first crash's test.
stb = copy.deepcopy(crash)
test = stb[0]["path_end"]
stb[0]["bugs"]["open_recent"].append({
    "id": 1700002, "status": "NEW", "resolution": "", "dupe_of": None, "crash_signature": "",
    "summary": f"Intermittent {test} | single tracking bug",
    "keywords": "intermittent-failure,intermittent-testcase", "whiteboard": "",
    "internal_id": 98, "occurrences": None})
save("crash_stb", stb)
# An open single tracking bug for the reftest, as the bug filer names a reftest pair.
stb = copy.deepcopy(reftest)
stb[0]["bugs"]["open_recent"].append({
    "id": 1700003, "status": "NEW", "resolution": "", "dupe_of": None, "crash_signature": "",
    "summary": "Intermittent layout/reftests/bugs/1804872-2.html == "
               "layout/reftests/bugs/1804872-2-ref.html | single tracking bug",
    "keywords": "intermittent-failure,intermittent-testcase", "whiteboard": "",
    "internal_id": 97, "occurrences": None})
save("reftest_stb", stb)
PYEOF
decide "reftest: every retrigger reproduces the REFTEST line: regression" 0 \
    'o["verdict"] == "regression" and o["reason"] == "reproduced" and len(o["lines"]) == 1 and o["lines"][0]["reproduced"] == 2 and o["lines"][0]["line"].startswith("TEST-UNEXPECTED-FAIL | layout/reftests/bugs/1804872-2.html == layout/reftests/bugs/1804872-2-ref.html | image comparison")' \
    -- --original "$reftest" --retrigger "$reftest" --retrigger "$reftest"
decide "reftest: the line without its label or behind a counter reproduces too" 0 \
    'o["verdict"] == "regression" and o["lines"][0]["reproduced"] == 2' \
    -- --original "$reftest" --retrigger "$work/reftest_nolabel.json" --retrigger "$work/reftest_counter.json"
decide "reftest: retriggers that pass make it intermittent, not undecided" 0 \
    'o["verdict"] == "intermittent" and o["reason"] == "not-reproduced"' \
    -- --original "$reftest" --passed 5
decide "reftest: a single tracking bug for the reftest pair is found" 0 \
    'o["verdict"] == "regression" and o["reason"] == "reproduced-known-intermittent" and o["tracked"][0]["bug"] == 1700003' \
    -- --original "$work/reftest_stb.json" --retrigger "$reftest" --retrigger "$reftest"
decide "crash: the test is the test and the signature the message" 0 \
    'o["verdict"] == "regression" and [l["line"] for l in o["lines"]] == ["PROCESS-CRASH | dom/base/test/unit_ipc/test_bug553888_wrap.js | application crashed [@ libsystem_kernel.dylib + 0x0000000000000dfa]", "PROCESS-CRASH | xpcshell-child-process.toml:dom/indexedDB/test/unit/test_event_source.js | application crashed [@ libsystem_kernel.dylib + 0x0000000000000dfa]"]' \
    -- --original "$crash" --retrigger "$crash" --retrigger "$crash"
decide "crash: the older layout (test first) is the same crash" 0 \
    'o["verdict"] == "regression" and all(l["reproduced"] == 2 for l in o["lines"])' \
    -- --original "$crash" --retrigger "$work/crash_older.json" --retrigger "$work/crash_older.json"
decide "crash: the same signature in another test is another failure" 0 \
    'o["verdict"] == "intermittent" and all(l["reproduced"] == 0 for l in o["lines"])' \
    -- --original "$crash" --retrigger "$work/crash_elsewhere.json" --retrigger "$work/crash_elsewhere.json"
decide "crash: a single tracking bug for the crashed test is found" 0 \
    'o["tracked"] and o["tracked"][0]["bug"] == 1700002 and "test_bug553888_wrap.js" in o["tracked"][0]["line"]' \
    -- --original "$work/crash_stb.json" --retrigger "$crash"

"$BIN/retrig" decide --help >"$work/out" 2>&1 && grep -q "usage: retrig decide" "$work/out" \
    && ok "--help prints the usage and exits 0" || bad "--help: $(head -c 300 "$work/out")"
"$BIN/retrig" help 2>&1 | grep -q "decide --original" && ok "retrig help lists decide" \
    || bad "retrig help does not list decide"
decide "no --original is a usage error" 2 "usage: retrig decide" -- --retrigger "$orig"
decide "--threshold 0 is a usage error" 2 "threshold" -- --original "$orig" --threshold 0
decide "--passed not a number is a usage error" 2 "passed" -- --original "$orig" --passed many
decide "--passed negative is a usage error" 2 "passed" -- --original "$orig" --passed -1
decide "a stray argument is a usage error" 2 "unexpected argument" -- --original "$orig" extra.json
decide "an unknown option is a usage error" 2 "usage" -- --original "$orig" --bogus
decide "a missing file fails naming it" 1 "nonexistent.json" -- --original "$orig" --retrigger "$work/nonexistent.json"
decide "a file that is not JSON fails with the reason" 1 "not JSON" -- --original "$work/notjson.json"
decide "a wrong type fails naming the field" 1 "open_recent" -- --original "$orig" --retrigger "$work/badtype.json"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
