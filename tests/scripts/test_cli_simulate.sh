#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_simulate.sh - `retrig simulate`: --generate writes the same file for the same
# seed, in the documented shape; a small generated file gives sane figures for every policy
# (seed asks 5 retriggers in one round, adaptive is more accurate with fewer, mozci misses
# partial regressions); the table and JSON shapes; configuration keys as defaults; a trace
# per case on hand-written cases; exit codes and usage errors. Push-level cases (issue 32):
# --mix push, pooled against the per-task policies, a hand-written 3-fail/4-pass case
# decided regression within a round and a 1-fail/6-pass case intermittent retriggering only
# the failing configuration, and clear errors for bad push-level lines.
set -u
BIN=${RT_TEST_BIN_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
# Only our own variables: an unknown RETRIG_* variable is itself a configuration error.
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
# check NAME FILE EXPR: EXPR, a Python expression over `o` (FILE's JSON), must hold.
check() {
    if "$PY" -c 'import json, sys
o = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" 2>"$work/pyerr"; then
        ok "$1"
    else
        bad "$1: $3 is false for $(head -c 600 "$2") $(cat "$work/pyerr")"
    fi
}

# --- generate ---
"$BIN/retrig" simulate --generate 2000 --seed 7 --out "$work/a.jsonl" 2>"$work/err" \
    && ok "--generate exits 0" || bad "--generate: $(head -c 300 "$work/err")"
"$BIN/retrig" simulate --generate 2000 --seed 7 >"$work/b.jsonl" 2>"$work/err"
cmp -s "$work/a.jsonl" "$work/b.jsonl" && ok "the same seed writes the same file (--out and stdout)" \
    || bad "seed 7 gave two different files"
"$BIN/retrig" simulate --generate 2000 --seed 8 >"$work/c.jsonl"
cmp -s "$work/a.jsonl" "$work/c.jsonl" && bad "seeds 7 and 8 gave the same file" \
    || ok "another seed writes another file"
"$BIN/retrig" simulate --generate 2000 --seed 7 --mix observed --regression-share 0.3 \
    >"$work/o.jsonl"
"$PY" - "$work/a.jsonl" "$work/o.jsonl" >"$work/shape.json" <<'PYEOF'
import json, sys
out = {}
for name, path in (("uniform", sys.argv[1]), ("observed", sys.argv[2])):
    cases = [json.loads(l) for l in open(path)]
    inter = [c["rate"] for c in cases if c["truth"] == "intermittent"]
    out[name] = {
        "n": len(cases),
        "keys_ok": all({"truth", "history", "outcomes"} <= set(c) and len(c["outcomes"]) >= 10
                       and all(isinstance(x, bool) for x in c["outcomes"])
                       and 0 <= c["history"]["failures"] <= c["history"]["runs"] <= 1000
                       for c in cases),
        "regressions": sum(c["truth"] == "regression" for c in cases) / len(cases),
        "no_history": sum(c["history"]["runs"] == 0 for c in cases) / len(cases),
        "inter_mean_rate": sum(inter) / len(inter),
        "inter_above_20": sum(r >= 0.2 for r in inter) / len(inter),
        "regression_history_clean": sum(c["history"]["failures"] == 0 for c in cases
                                        if c["truth"] == "regression")
                                    / max(1, sum(c["truth"] == "regression" for c in cases)),
    }
print(json.dumps(out))
PYEOF
check "2000 cases of the documented shape, outcomes >= 10 per case" "$work/shape.json" \
    'o["uniform"]["n"] == 2000 and o["uniform"]["keys_ok"] and o["observed"]["keys_ok"]'
check "about 15% regressions and 15% without history; --regression-share moves the first" \
    "$work/shape.json" \
    'abs(o["uniform"]["regressions"] - 0.15) < 0.03 and abs(o["observed"]["regressions"] - 0.3) < 0.04 and abs(o["uniform"]["no_history"] - 0.15) < 0.03'
check "observed: flaky intermittents far more common than in uniform" "$work/shape.json" \
    'o["observed"]["inter_mean_rate"] > 2 * o["uniform"]["inter_mean_rate"] and o["observed"]["inter_above_20"] > 0.5 > o["uniform"]["inter_above_20"]'
check "a regression's history is from before the push: mostly clean" "$work/shape.json" \
    'o["uniform"]["regression_history_clean"] > 0.6'

# --- simulate ---
"$BIN/retrig" simulate --cases "$work/a.jsonl" --policy seed --policy adaptive --policy mozci \
    --format json >"$work/sim.json" 2>"$work/err" && ok "simulate --format json exits 0" \
    || bad "simulate: $(head -c 300 "$work/err")"
check "JSON report: the cases, the settings used and one row per policy, in order" "$work/sim.json" \
    'o["cases"] == 2000 and o["regressions"] + o["intermittents"] == 2000 and [p["policy"] for p in o["policies"]] == ["seed", "adaptive", "mozci"] and o["settings"]["confidence"] == 0.95 and o["settings"]["max_retriggers"] == 10 and o["settings"]["population"] == "fitted"'
check "every figure of every row is a share or a count in range" "$work/sim.json" \
    'all(0 <= p[k] <= 1 for p in o["policies"] for k in ("accuracy", "regression_recall", "intermittents_called_regression", "low_confidence")) and all(1 <= p["rounds_per_failure"] <= p["retriggers_per_failure"] <= 10 for p in o["policies"])'
check "seed: 5 retriggers in one round, recall high, many intermittents called regression" \
    "$work/sim.json" \
    'o["policies"][0]["retriggers_per_failure"] == 5 and o["policies"][0]["rounds_per_failure"] == 1 and o["policies"][0]["regression_recall"] > 0.9 and o["policies"][0]["intermittents_called_regression"] > 0.05'
check "adaptive: more accurate than seed with fewer retriggers, few false regressions" \
    "$work/sim.json" \
    'o["policies"][1]["accuracy"] > max(0.95, o["policies"][0]["accuracy"]) and o["policies"][1]["retriggers_per_failure"] < 3.5 and o["policies"][1]["intermittents_called_regression"] < 0.03 and o["policies"][1]["regression_recall"] > 0.85 and o["policies"][1]["undecided"] == 0'
check "mozci: misses partial regressions, rarely calls an intermittent a regression" \
    "$work/sim.json" \
    'o["policies"][2]["regression_recall"] < o["policies"][0]["regression_recall"] and o["policies"][2]["intermittents_called_regression"] < 0.02'
check "shadow verdicts: each policy's agreement with the others on the same evidence" \
    "$work/sim.json" \
    'set(o["policies"][1]["shadow_agreement"]) == {"seed", "mozci"} and all(0 < v <= 1 for v in o["policies"][1]["shadow_agreement"].values())'

"$BIN/retrig" simulate --cases "$work/a.jsonl" --policy seed --policy adaptive --policy mozci \
    >"$work/table" 2>&1
if grep -q '^| policy | accuracy | regression recall | intermittents called regression | retriggers / failure | rounds / failure | low-confidence |$' "$work/table" \
    && [ "$(grep -cE '^\| (seed|adaptive|mozci) \| [0-9.]+ \|' "$work/table")" = 3 ] \
    && grep -q '^2000 cases (' "$work/table"; then
    ok "table: a summary line, a Markdown table with one row per policy"
else
    bad "table shape: $(cat "$work/table")"
fi

# --- configuration as defaults ---
"$BIN/retrig" simulate --cases "$work/a.jsonl" --format json >"$work/default.json"
check "no --policy: decide_policy (seed)" "$work/default.json" \
    '[p["policy"] for p in o["policies"]] == ["seed"]'
RETRIG_DECIDE_POLICY=adaptive RETRIG_DECIDE_MAX_RETRIGGERS=4 RETRIG_DECIDE_CONFIDENCE=0.9 \
    RETRIG_DECIDE_PRIOR_REGRESSION=0.2 "$BIN/retrig" simulate --cases "$work/a.jsonl" \
    --format json --trace "$work/trace.jsonl" >"$work/env.json"
check "decide_policy, decide_max_retriggers, decide_confidence, decide_prior_regression are the defaults" \
    "$work/env.json" \
    '[p["policy"] for p in o["policies"]] == ["adaptive"] and o["settings"]["max_retriggers"] == 4 and o["settings"]["confidence"] == 0.9 and o["settings"]["prior_regression"] == 0.2'
"$PY" -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(rows) == 2000 and max(r["retriggers"] for r in rows) == 4 else 1)' "$work/trace.jsonl" \
    && ok "decide_max_retriggers = 4 caps every case at 4 retriggers (trace)" \
    || bad "trace: $(head -c 300 "$work/trace.jsonl")"
"$BIN/retrig" simulate --cases "$work/a.jsonl" --policy adaptive --max-retriggers 6 \
    --confidence 0.99 --prior-regression 0.1 --population 1.1,20 --format json >"$work/opts.json"
check "options override the configuration" "$work/opts.json" \
    'o["settings"]["max_retriggers"] == 6 and o["settings"]["confidence"] == 0.99 and o["settings"]["prior_regression"] == 0.1 and o["settings"]["population"] == "given" and o["settings"]["population_alpha"] == 1.1'

# --- hand-written cases, through the trace ---
cat >"$work/hand.jsonl" <<'EOF'
{"truth": "regression", "history": {"runs": 1000, "failures": 0}, "outcomes": [true, true, true, true, true, true, true, true, true, true]}

{"truth": "intermittent", "history": {"runs": 1000, "failures": 400}, "outcomes": [false, true, false, false, false, false, false, false, false, false]}
{"truth": "intermittent", "history": {"runs": 0, "failures": 0}, "outcomes": [false, false, false, false, false, false, false, false, false, false]}
EOF
"$BIN/retrig" simulate --cases "$work/hand.jsonl" --policy adaptive --policy mozci \
    --population default --trace "$work/hand.trace" --format json >"$work/hand.json"
"$PY" -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
a = [r for r in rows if r["policy"] == "adaptive"]
m = [r for r in rows if r["policy"] == "mozci"]
ok = (len(a) == 3 and a[0]["verdict"] == "regression" and a[0]["retriggers"] == 2
      and a[0]["rounds"] == 1 and a[1]["verdict"] == "intermittent" and a[2]["verdict"] == "intermittent"
      and a[2]["retriggers"] == 2 and m[0]["verdict"] == "regression" and m[0]["retriggers"] == 5
      and m[1]["verdict"] == "intermittent")
sys.exit(0 if ok else 1)' "$work/hand.trace" \
    && ok "hand-written cases: a clean test reproducing twice is a regression after 2, a 40% flake and a silent test intermittent (blank lines skipped)" \
    || bad "hand-written trace: $(cat "$work/hand.trace")"

# --- push-level cases (issue 32) ---
"$BIN/retrig" simulate --generate 2000 --seed 7 --mix push --out "$work/p.jsonl" 2>"$work/err" \
    && ok "--generate --mix push exits 0" || bad "--mix push: $(head -c 300 "$work/err")"
"$BIN/retrig" simulate --generate 2000 --seed 7 --mix push | cmp -s - "$work/p.jsonl" \
    && ok "the push mix: the same seed writes the same file" || bad "push mix not deterministic"
"$PY" - "$work/p.jsonl" >"$work/pshape.json" <<'PYEOF'
import json, sys
cases = [json.loads(l) for l in open(sys.argv[1])]
def ok(c):
    cf = c["configs"]
    return (c["truth"] in ("regression", "intermittent") and 1 <= len(cf) <= 10
            and any(x["failed"] for x in cf) and len({x["name"] for x in cf}) == len(cf)
            and all(len(x["outcomes"]) == 10 and all(isinstance(o, bool) for o in x["outcomes"])
                    and isinstance(x["failed"], bool) and "/" in x["name"] for x in cf))
reg = [c for c in cases if c["truth"] == "regression"]
inter = [c for c in cases if c["truth"] == "intermittent"]
failing = lambda c: sum(x["failed"] for x in c["configs"])
multi = [c for c in inter if len(c["configs"]) > 1]
print(json.dumps({
    "n": len(cases), "shape": all(ok(c) for c in cases),
    "regressions": len(reg) / len(cases),
    "reg_failing": sum(failing(c) for c in reg) / len(reg),
    "inter_failing": sum(failing(c) for c in inter) / len(inter),
    "rates_vary": sum(len({x["rate"] for x in c["configs"]}) > 1 for c in multi) / max(1, len(multi)),
}))
PYEOF
check "push mix: 1-10 named configurations, one failing at least, 10 outcomes each" \
    "$work/pshape.json" 'o["n"] == 2000 and o["shape"] and abs(o["regressions"] - 0.15) < 0.03'
check "push mix: regressions fail on more configurations than intermittents, whose rates vary" \
    "$work/pshape.json" 'o["reg_failing"] > 1.5 * o["inter_failing"] and o["rates_vary"] > 0.95'
"$BIN/retrig" simulate --cases "$work/p.jsonl" --policy seed --policy adaptive --policy pooled \
    --format json >"$work/psim.json" 2>"$work/err" && ok "simulate push-level cases exits 0" \
    || bad "simulate push: $(head -c 300 "$work/err")"
check "push-level JSON: the level, the configurations, a row per policy with the share decided with no retrigger" \
    "$work/psim.json" \
    'o["level"] == "push" and o["cases"] == 2000 and o["failing_configs"] <= o["configs"] and [p["policy"] for p in o["policies"]] == ["seed", "adaptive", "pooled"] and all(0 <= p["decided_without_retriggers"] <= 1 for p in o["policies"])'
check "pooled: more accurate than per-task adaptive at less than half its retriggers; only it decides with none" \
    "$work/psim.json" \
    'o["policies"][2]["accuracy"] > o["policies"][1]["accuracy"] and 2 * o["policies"][2]["retriggers_per_failure"] < o["policies"][1]["retriggers_per_failure"] and o["policies"][2]["decided_without_retriggers"] > 0.3 and o["policies"][1]["decided_without_retriggers"] == 0 and o["policies"][2]["undecided"] == 0'
"$BIN/retrig" simulate --cases "$work/p.jsonl" --policy seed --policy pooled >"$work/ptable" 2>&1
if grep -q '^| policy | accuracy | regression recall | intermittents called regression | retriggers / failure | rounds / failure | low-confidence | no retrigger |$' "$work/ptable" \
    && [ "$(grep -cE '^\| (seed|pooled) \| [0-9.]+ \|.* [0-9.]+ \|$' "$work/ptable")" = 2 ] \
    && grep -q '^2000 push-level cases (.* failing configurations of ' "$work/ptable"; then
    ok "push-level table: the same columns plus no retrigger"
else
    bad "push-level table: $(cat "$work/ptable")"
fi
"$BIN/retrig" simulate --cases "$work/a.jsonl" --policy adaptive --policy pooled --format json \
    >"$work/taskpool.json"
check "pooled on per-task cases: a push of one configuration, the adaptive verdicts" \
    "$work/taskpool.json" \
    'o["policies"][1]["policy"] == "pooled" and all(o["policies"][0][k] == o["policies"][1][k] for k in ("accuracy", "retriggers_per_failure", "rounds_per_failure")) and "level" not in o and "decided_without_retriggers" not in o["policies"][1]'

# Hand-written: failing on 3 configurations of 7 (no history), then on 1 of 7 (1,000 clean runs).
T='[true, true, true, true, true, true, true, true, true, true]'
F='[false, false, false, false, false, false, false, false, false, false]'
cat >"$work/phand.jsonl" <<JSONL
{"truth": "regression", "history": {"runs": 0, "failures": 0}, "configs": [{"name": "linux1804-64/debug", "failed": true, "outcomes": $T}, {"name": "linux1804-64/opt", "failed": false, "outcomes": $F}, {"name": "linux1804-64/asan", "failed": true, "outcomes": $T}, {"name": "windows11-64/opt", "failed": false, "outcomes": $F}, {"name": "windows11-64/debug", "failed": true, "outcomes": $T}, {"name": "macosx1015-64/opt", "failed": false, "outcomes": $F}, {"name": "macosx1015-64/debug", "failed": false, "outcomes": []}]}
{"truth": "intermittent", "history": {"runs": 1000, "failures": 0}, "configs": [{"name": "linux1804-64/debug", "failed": false, "outcomes": []}, {"name": "linux1804-64/opt", "failed": false, "outcomes": []}, {"name": "linux1804-64/asan", "failed": false, "outcomes": []}, {"name": "windows11-64/opt", "failed": true, "outcomes": $F}, {"name": "windows11-64/debug", "failed": false, "outcomes": []}, {"name": "macosx1015-64/opt", "failed": false, "outcomes": []}, {"name": "macosx1015-64/debug", "failed": false, "outcomes": []}]}
JSONL
"$BIN/retrig" simulate --cases "$work/phand.jsonl" --policy pooled --policy adaptive \
    --population default --trace "$work/phand.trace" --format json >"$work/phand.json" 2>"$work/err" \
    || bad "hand-written push cases: $(head -c 300 "$work/err")"
"$PY" -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
p = [r for r in rows if r["policy"] == "pooled"]
a = [r for r in rows if r["policy"] == "adaptive"]
failing = {"linux1804-64/debug", "linux1804-64/asan", "windows11-64/debug"}
ok = (len(p) == 2 and p[0]["verdict"] == "regression" and p[0]["rounds"] <= 1
      and set(p[0]["retriggers_by_config"]) <= failing and p[0]["configs"] == 7 and p[0]["failing"] == 3
      and a[0]["verdict"] == "regression" and set(a[0]["retriggers_by_config"]) == failing
      and a[0]["retriggers"] > p[0]["retriggers"])
sys.exit(0 if ok else 1)' "$work/phand.trace" \
    && ok "pooled: failing on 3 configurations and passing on 4 is a regression within one round (adaptive: a set per failing configuration)" \
    || bad "3-fail/4-pass trace: $(cat "$work/phand.trace")"
"$PY" -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
p = [r for r in rows if r["policy"] == "pooled"][1]
ok = (p["verdict"] == "intermittent" and p["retriggers"] >= 1
      and p["retriggers_by_config"] == {"windows11-64/opt": p["retriggers"]})
sys.exit(0 if ok else 1)' "$work/phand.trace" \
    && ok "pooled: failing on 1 configuration and passing on 6 is intermittent, retriggering only that configuration" \
    || bad "1-fail/6-pass trace: $(cat "$work/phand.trace")"

# --- errors ---
run() { "$BIN/retrig" simulate "$@" >"$work/out" 2>"$work/err"; echo $?; }
expect() { # NAME STATUS PATTERN -- ARGS
    local name=$1 status=$2 pattern=$3; shift 4
    local got; got=$(run "$@")
    if [ "$got" = "$status" ] && grep -Eq -- "$pattern" "$work/err" "$work/out"; then ok "$name"
    else bad "$name: exit $got (expected $status), output: $(head -c 300 "$work/err" "$work/out")"; fi
}
printf '{"truth": "regression", "history": {"runs": 3, "failures": 1}, "outcomes": [true]}\nnot json\n' >"$work/broken.jsonl"
printf '{"truth": "regression", "history": {"runs": 3, "failures": 4}, "outcomes": [true]}\n' >"$work/invalid.jsonl"
: >"$work/empty.jsonl"
printf '{"truth": "regression", "history": {"runs": 3, "failures": 0}, "configs": [{"name": "a/opt", "failed": false, "outcomes": []}]}\n' >"$work/nofail.jsonl"
printf '{"truth": "regression", "history": {"runs": 3, "failures": 0}, "configs": [{"name": "a/opt", "failed": true, "outcomes": [true]}, {"name": "a/opt", "failed": false, "outcomes": []}]}\n' >"$work/twice.jsonl"
printf '{"truth": "regression", "history": {"runs": 3, "failures": 0}, "configs": [{"name": "a/opt", "failed": true, "outcomes": []}]}\n' >"$work/nooutcomes.jsonl"
printf '{"truth": "regression", "history": {"runs": 3, "failures": 0}, "configs": [{"name": "a/opt", "failed": 1, "outcomes": [true]}]}\n' >"$work/notbool.jsonl"
printf '{"truth": "regression", "history": {"runs": 3, "failures": 0}, "configs": {"a/opt": true}}\n' >"$work/notarray.jsonl"
head -1 "$work/a.jsonl" >"$work/mixed.jsonl"; head -1 "$work/p.jsonl" >>"$work/mixed.jsonl"
expect "--help prints the usage and exits 0" 0 "usage: retrig simulate" -- --help
expect "neither --cases nor --generate is a usage error" 2 "either --cases or --generate" --
expect "both is a usage error" 2 "either --cases or --generate" -- --cases "$work/a.jsonl" --generate 5 --seed 1
expect "--generate without --seed is a usage error" 2 "needs --seed" -- --generate 5
expect "an unknown policy is a usage error" 2 "seed, adaptive or mozci" -- --cases "$work/a.jsonl" --policy majority
expect "an unknown mix is a usage error" 2 "uniform or observed" -- --generate 5 --seed 1 --mix lognormal
expect "--confidence out of range is a usage error" 2 "confidence" -- --cases "$work/a.jsonl" --confidence 1.5
expect "--population too wide is a usage error" 2 "population" -- --cases "$work/a.jsonl" --population 0.5,1
expect "a stray argument is a usage error" 2 "unexpected argument" -- --cases "$work/a.jsonl" extra
expect "a line that is not JSON fails naming the line" 1 '"line":"2"' -- --cases "$work/broken.jsonl"
expect "an invalid case fails naming the field" 1 "history" -- --cases "$work/invalid.jsonl"
expect "an empty file fails" 1 "no cases" -- --cases "$work/empty.jsonl"
expect "a missing file fails naming it" 1 "nonexistent.jsonl" -- --cases "$work/nonexistent.jsonl"
expect "a push-level case with no failing configuration fails saying so" 1 'no configuration failed' -- --cases "$work/nofail.jsonl"
expect "a configuration named twice fails naming it" 1 'a/opt.*twice' -- --cases "$work/twice.jsonl"
expect "a failing configuration without outcomes fails naming the field" 1 'configs.*\[0\].*outcomes' -- --cases "$work/nooutcomes.jsonl"
expect "\"failed\" not a boolean fails naming the field" 1 'configs.*\[0\].*failed.*true or false' -- --cases "$work/notbool.jsonl"
expect "\"configs\" not an array fails naming it" 1 '"line":"1".*configs.*array' -- --cases "$work/notarray.jsonl"
expect "per-task and push-level cases in one file fail naming the line" 1 '"line":"2".*push-level case' -- --cases "$work/mixed.jsonl"
expect "--policy pooled is accepted" 0 "pooled" -- --cases "$work/a.jsonl" --policy pooled
"$BIN/retrig" help 2>&1 | grep -q "simulate --cases" && ok "retrig help lists simulate" \
    || bad "retrig help does not list simulate"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
