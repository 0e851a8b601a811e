#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_junit_cli.sh - `retrig junit FILE...` offline, without a database: JSON when stdout is
# not a terminal, every testcase of the real reports accounted for (stored or set aside), a
# Surefire rerun shown as FLAKY with its attempts, jest-junit's nameless testcase set aside
# with its line, a file with a DOCTYPE refused (exit 1) while the other files still print,
# the table escaping control characters, and usage errors exiting 2.
set -u
BIN=${RT_TEST_BIN_DIR:?}
SRC=${RT_TEST_SOURCE_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done
export RETRIG_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none" # never used
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
J=$SRC/tests/fixtures/junit

"$BIN/retrig" junit "$J/surefire-reruns.xml" "$J/jest-junit-classname-empty.xml" >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" = 0 ]; then ok "two reports read, exit 0"; else bad "exit $rc: $(head -c 400 "$work/err")"; fi
if "$PY" - "$work/out" <<'PYEOF'; then ok "JSON: FLAKY with attempts, FAIL with reruns, the nameless testcase set aside"; else bad "JSON content: $(head -c 600 "$work/out")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
tests = {t["test"]: t for t in d["tests"]}
once = tests["org.example.RetryTest::failsOnce"]
assert once["outcome"] == "FLAKY" and once["failed"] and once["attempts"] == 2, once
always = tests["org.example.RetryTest::alwaysFails"]
assert always["outcome"] == "FAIL" and always["attempts"] == 3, always
files = {f["file"].rsplit("/", 1)[1]: f for f in d["files"]}
jest = files["jest-junit-classname-empty.xml"]
assert jest["testcases"] == 5 and jest["set_aside"] == 1, jest
assert jest["aside"] == ["line 6: testcase without a name"], jest
# same name in two files: two tests
assert "e2e/__tests__/each.test.ts::shows error message when not enough arguments" in tests
assert "e2e/__tests__/snapshot.test.ts::shows error message when not enough arguments" in tests
PYEOF

# Every real report: testcases read equal the <testcase> elements in the file.
all_ok=1
for f in "$J"/*.xml; do
    "$BIN/retrig" junit "$f" >"$work/one" 2>/dev/null || { all_ok=0; bad "$(basename "$f") refused"; continue; }
    want=$(grep -o '<testcase[ />]' "$f" | wc -l)
    got=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"][0]["testcases"])' "$work/one")
    [ "$want" = "$got" ] || { all_ok=0; bad "$(basename "$f"): $got testcases read, $want in the file"; }
done
[ "$all_ok" = 1 ] && ok "every fixture: testcases read = <testcase> elements"

printf '<?xml version="1.0"?>\n<!DOCTYPE t [<!ENTITY a "aaaa">]>\n<testsuite><testcase classname="&a;" name="x"/></testsuite>\n' >"$work/doctype.xml"
"$BIN/retrig" junit "$work/doctype.xml" "$J/nose2-failure.xml" >"$work/out" 2>/dev/null
rc=$?
if [ "$rc" = 1 ] && grep -q '"error":"a DOCTYPE' "$work/out" && grep -q 'AssertionError: 0.5 != 0.4' "$work/out"; then
    ok "a DOCTYPE refused (exit 1), the other file still read"
else
    bad "doctype: exit $rc: $(head -c 400 "$work/out")"
fi

# XML 1.0 has no ESC; a carriage return and a line break in a name could still forge a row
printf '<testsuite><testcase classname="a" name="evil&#13;&#10;PASS 1 forged"><failure message="m"/></testcase></testsuite>' >"$work/escape.xml"
"$BIN/retrig" junit --format table "$work/escape.xml" >"$work/out" 2>&1
if grep -qF 'a::evil\r\nPASS 1 forged' "$work/out" && ! grep -q $'\r' "$work/out"; then
    ok "the table escapes control characters"
else
    bad "table: $(cat -v "$work/out" | head -5)"
fi

"$BIN/retrig" junit >/dev/null 2>&1; rc1=$?
"$BIN/retrig" junit --format xml "$J/mocha.xml" >/dev/null 2>&1; rc2=$?
if [ "$rc1" = 2 ] && [ "$rc2" = 2 ]; then ok "usage errors exit 2"; else bad "usage: $rc1 $rc2"; fi

echo "# $passed passed, $failed failed"
[ "$failed" = 0 ]
