#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_utf8.sh - text cut to a size keeps whole characters, so nothing disappears:
# `retrig errorsummary` lists both failures of a file whose first failure's fields are cut
# (RT_ES_MAX_FIELD, 2,048 bytes) inside a 2-, 3- or 4-byte character, and `retrig decide`
# keeps a failure line cut (64 KiB) inside a character: a regression with its line, never
# "lines": [].
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

for char in é € 🐛; do
    for shift in 0 1 2 3; do
        "$PY" - "$char" "$shift" "$work/es.log" <<'PY'
import json, sys
char, shift, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = "a" * shift + char * 2100  # every cut position inside the character, in turn
lines = [
    {"action": "test_groups", "groups": ["dom/a"]},
    {"action": "test_result", "test": "dom/a/" + text, "subtest": text, "status": "FAIL",
     "expected": "PASS", "group": "dom/a", "message": text},
    {"action": "test_result", "test": "dom/a/second.html", "status": "FAIL", "expected": "PASS",
     "group": "dom/a", "message": "second failure"},
    {"action": "group_result", "group": "dom/a", "status": "ERROR"},
]
with open(path, "w", encoding="utf-8") as f:
    for line in lines:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")
PY
        if ! "$BIN/retrig" errorsummary "$work/es.log" >"$work/out" 2>"$work/err"; then
            bad "errorsummary ($char, shift $shift): exit $? $(head -c 300 "$work/err")"
            continue
        fi
        if "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["failures"]) == 2, d["failures"]
assert d["failures"][1]["message"] == "second failure"
assert all(len(f["message"].encode()) <= 2048 for f in d["failures"])' "$work/out"; then
            ok "errorsummary lists both failures ($char, shift $shift)"
        else
            bad "errorsummary ($char, shift $shift): $(head -c 300 "$work/out")"
        fi
    done
done

# bug_suggestions whose first line is longer than 64 KiB, cut inside a character.
for char in é € 🐛; do
    "$PY" - "$FIX/treeherder/bug_suggestions.json" "$char" "$work/bugs.json" <<'PY'
import json, sys
suggestions = json.load(open(sys.argv[1]))
first = suggestions[0]
first["search"] = first["search"] + " " + "b" + sys.argv[2] * 40000
json.dump(suggestions, open(sys.argv[3], "w"), ensure_ascii=False)
PY
    if ! "$BIN/retrig" decide --original "$work/bugs.json" --retrigger "$work/bugs.json" \
        --retrigger "$work/bugs.json" >"$work/out" 2>"$work/err"; then
        bad "decide ($char): exit $? $(head -c 300 "$work/err")"
        continue
    fi
    if "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "regression", d["verdict"]
assert d["lines"], "no lines"
assert any(len(l["line"].encode()) > 60000 for l in d["lines"])' "$work/out"; then
        ok "decide keeps the long line cut inside $char"
    else
        bad "decide ($char): $(head -c 300 "$work/out")"
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
