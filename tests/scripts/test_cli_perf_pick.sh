#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_perf_pick.sh - `retrig perf-pick` on the recorded alert summaries: the same
# picks as retrig-perf (regression only by default; improvements in family order and
# rounds; a used budget passing over a family; a young summary), a Perfherder page as
# input, and usage errors.
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
summaries="$FIX/perfherder/alert_summaries.json"
now=2023-06-24T12:00:00Z

# picks NAME EXPECTED-IDS ARGS...: the alert ids printed, in order, comma-separated.
picks() {
    local name=$1 want=$2
    shift 2
    local out got
    if ! out=$("$BIN/retrig" perf-pick "$@" 2>"$work/err"); then
        bad "$name: exit $? ($(head -c 300 "$work/err"))"
        return
    fi
    got=$("$PY" -c 'import json, sys; print(",".join(str(p["alert_id"]) for p in json.load(sys.stdin)))' <<<"$out")
    if [ "$got" = "$want" ]; then ok "$name"; else bad "$name: picked '$got', expected '$want'"; fi
}

picks "regressions only by default" 177727 --summaries "$summaries" --now $now
# 177724 is the regression's job and 69347 is 69346's: covered, not picked again.
picks "improvements: regression, then families, then jobs" 177727,69345,69346 \
    --summaries "$summaries" --now $now --include-improvements
picks "max-per-summary 2 (jobs, not alerts)" 177727,69345,69346 \
    --summaries "$summaries" --now $now --include-improvements --max-per-summary 2
picks "max-per-summary 1" 177727,69345 \
    --summaries "$summaries" --now $now --include-improvements --max-per-summary 1
picks "osx budget used up passes to the next family" 177727,69345 \
    --summaries "$summaries" --now $now --include-improvements --used osx=600
picks "a summary 10 minutes old waits" "" --summaries "$summaries" --now 2023-06-23T11:26:45Z
picks "the same summary an hour old is picked" 177727 --summaries "$summaries" --now 2023-06-23T12:17:00Z

"$PY" -c 'import json, sys; print(json.dumps({"count": 3, "next": None, "previous": None, "results": json.load(open(sys.argv[1]))}))' \
    "$summaries" >"$work/page.json"
picks "a Perfherder page is read like a list" 177727 --summaries "$work/page.json" --now $now

out=$("$BIN/retrig" perf-pick --summaries "$summaries" --now $now --explain 2>&1)
if "$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
p = d["picked"][0]
assert {"summary_id", "alert_id", "platform", "family", "amount_pct", "is_regression"} <= set(p), p
assert p["family"] == "linux" and p["is_regression"] is True and p["summary_id"] == 38857, p
r = {(s["summary_id"], s["alert_id"]): s["reason"] for s in d["skipped"]}
assert r[(20239, None)] == "framework 2 is not configured", r
assert r[(38857, 177724)].startswith("improvement"), r
assert sorted(d["closed"]) == [20174, 38857], d["closed"]
' <<<"$out"; then ok "--explain gives the reasons"; else bad "--explain: $out"; fi

out=$("$BIN/retrig" perf-pick --summaries "$summaries" --now $now --include-improvements --explain 2>&1)
if "$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
c = {(x["summary_id"], x["alert_id"]): x for x in d["covered"]}
assert c[(38857, 177724)]["by_alert_id"] == 177727, c
assert c[(20174, 69347)]["by_alert_id"] == 69346, c
assert "same job" in c[(38857, 177724)]["reason"], c
assert d["left_out"] == [], d["left_out"]
' <<<"$out"; then ok "--explain names the alerts another backfill of their job covers"; else bad "--explain covered: $out"; fi

# One malformed alert (no platform) leaves that alert out, named, and the rest is picked.
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d:
    for a in s["alerts"]:
        if a["id"] == 177727:
            del a["series_signature"]["machine_platform"]
json.dump(d, open(sys.argv[2], "w"))' "$summaries" "$work/one-bad.json"
out=$("$BIN/retrig" perf-pick --summaries "$work/one-bad.json" --now $now --include-improvements --explain 2>"$work/err")
if "$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
assert [p["alert_id"] for p in d["picked"]] == [69345, 177724, 69346], d["picked"]
assert d["left_out"][0]["alert_id"] == 177727 and "machine_platform" in d["left_out"][0]["reason"], d
' <<<"$out" && grep -q "malformed alert left out" "$work/err"; then
    ok "a malformed alert is left out, named, and the page is still picked"
else
    bad "malformed alert: $out $(cat "$work/err")"
fi

"$BIN/retrig" perf-pick --now $now >/dev/null 2>&1
[ $? -eq 2 ] && ok "missing --summaries is a usage error" || bad "missing --summaries did not exit 2"
"$BIN/retrig" perf-pick --summaries "$summaries" --used nosuch=1 >/dev/null 2>&1
[ $? -eq 2 ] && ok "unknown family in --used is a usage error" || bad "--used nosuch did not exit 2"
head -c 300 "$summaries" >"$work/truncated.json"
"$BIN/retrig" perf-pick --summaries "$work/truncated.json" >/dev/null 2>&1
[ $? -eq 1 ] && ok "a truncated file fails" || bad "a truncated file did not exit 1"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
