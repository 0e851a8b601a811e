#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_culprit.sh - `retrig culprit`: whole searches driven through the command (every
# culprit position of a window of six skipped pushes, a solid and a flaky regression), no
# candidate, culprit-before-window, the budget, the culprit_* configuration keys, the
# simulation, and hostile input (bad JSON, huge arrays and files, bad revisions, bad counts)
# with exit codes 1 (bad input) and 2 (usage).
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

GOOD=3f1c0aa8d1b2c3d4e5f60718293a4b5c6d7e8f90
FAIL=9e8d7c6b5a40
# window FILE FIRST_RUNS FIRST_REPRODUCED SKIPPED FAILING_RUNS FAILING_REPRODUCED
window() {
    "$PY" - "$@" <<'PYEOF'
import json, sys
path, fr, frep, skipped, nr, nrep = sys.argv[1], *map(int, sys.argv[2:])
pushes = [{"revision": "3f1c0aa8d1b2c3d4e5f60718293a4b5c6d7e8f90", "runs": fr, "reproduced": frep}]
pushes += [{"revision": "%012x" % (0xa00000000000 + i), "runs": 0, "reproduced": 0}
           for i in range(1, skipped + 1)]
pushes.append({"revision": "9e8d7c6b5a40", "runs": nr, "reproduced": nrep})
json.dump(pushes, open(path, "w"))
PYEOF
}

# culprit NAME EXPECTED_STATUS CHECK -- ARGS...: runs retrig culprit; CHECK is a Python
# expression over `o`, the printed JSON (status 0), or a regular expression stderr must
# match (other statuses).
culprit() {
    local name=$1 status=$2 check=$3; shift 4
    "$BIN/retrig" culprit "$@" >"$work/out" 2>"$work/err"; local got=$?
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

# Whole searches: the script plays Taskcluster, running each probe on a push that carries
# the regression (reproducing every run) or not (passing every run).
"$PY" - "$BIN/retrig" "$work" <<'PYEOF' && ok "every culprit position of N-6..N found middle first within 3 rounds (solid and flaky, seed and adaptive)" || bad "whole searches"
import json, subprocess, sys
retrig, work = sys.argv[1], sys.argv[2]
revs = ["3f1c0aa8d1b2c3d4e5f60718293a4b5c6d7e8f90"] + ["%012x" % (0xa00000000000 + i) for i in range(1, 7)] + ["9e8d7c6b5a40"]
ok = True
for flags in (["--reproduction-rate", "1", "--history-runs", "2000"], ["--reproduction-rate", "0.75"],
              ["--policy", "adaptive", "--history-runs", "2000"], ["--policy", "adaptive"],
              ["--policy", "seed"]):
    for truth in range(1, 8):
        pushes = [{"revision": r, "runs": 0, "reproduced": 0} for r in revs]
        pushes[0]["runs"] = 1
        pushes[-1].update(runs=6, reproduced=6)
        rounds, first_probe = 0, None
        while True:
            json.dump(pushes, open(f"{work}/search.json", "w"))
            out = subprocess.run([retrig, "culprit", "--pushes", f"{work}/search.json"] + flags,
                                 capture_output=True, text=True)
            o = json.loads(out.stdout)
            if o["status"] != "searching":
                break
            rounds += 1
            first_probe = first_probe or o["probe"]["revision"]
            for p in (o["probe"], o["confirm"]):
                if p:
                    i = revs.index(p["revision"])
                    pushes[i]["runs"] += p["times"]
                    pushes[i]["reproduced"] += p["times"] if i >= truth else 0
        if o["status"] != "found" or o["culprit"] != revs[truth] or rounds > 3 \
                or first_probe != revs[4] or o["range"] != [revs[truth], revs[truth]]:
            print(f"FAIL: {flags} truth {revs[truth]}: {o}, {rounds} rounds, first probe {first_probe}")
            ok = False
sys.exit(0 if ok else 1)
PYEOF

window "$work/none.json" 1 0 0 6 6
culprit "no candidate: the failing push is the culprit at no cost" 0 \
    'o["status"] == "found" and o["culprit"] == "'$FAIL'" and o["probe"] is None and o["reason"] == "no-candidate" and o["range"] == ["'$FAIL'", "'$FAIL'"]' \
    -- --pushes "$work/none.json" --reproduction-rate 1 --history-runs 2000
culprit "no candidate, flaky regression: the known-good push is confirmed first" 0 \
    'o["status"] == "searching" and o["probe"]["revision"] == "'$GOOD'" and o["reason"] == "confirm-first" and o["range_includes_earlier"]' \
    -- --pushes "$work/none.json"
window "$work/before.json" 5 3 6 6 6
culprit "a first push that reproduces: culprit-before-window" 0 \
    'o["status"] == "culprit-before-window" and o["culprit"] is None and o["range"] == ["'$GOOD'", "'$GOOD'"] and o["range_includes_earlier"] and o["reason"] == "first-push-reproduces"' \
    -- --pushes "$work/before.json"
window "$work/six.json" 1 0 6 6 6
culprit "the first probe is the middle push, with the seed rule's times" 0 \
    'o["status"] == "searching" and o["probe"] == {"revision": "a00000000004", "times": o["times"]} and o["reason"] == "bisect" and o["reproductions"] == 2 and abs(o["reproduction_rate"] - 5/6) < 1e-6 and o["jobs_left"] == 120' \
    -- --pushes "$work/six.json"
culprit "--policy adaptive: the adaptive model's times, no seed k" 0 \
    'o["policy"] == "adaptive" and o["reproductions"] is None and o["status"] == "searching" and o["probe"] == {"revision": "a00000000004", "times": o["times"]} and 1 <= o["times"] <= 5' \
    -- --pushes "$work/six.json" --policy adaptive
culprit "a long clean history needs fewer runs" 0 \
    'o["reproductions"] == 1 and o["times"] < 4' -- --pushes "$work/six.json" --history-runs 5000
culprit "--max-jobs too small: stopped with the whole range" 0 \
    'o["status"] == "stopped" and o["reason"] == "budget-exhausted" and o["probe"] is None and o["range"] == ["'$GOOD'", "'$FAIL'"]' \
    -- --pushes "$work/six.json" --max-jobs 2
"$PY" - "$work/six.json" "$work/spent.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1])); p[4].update(runs=5, reproduced=5); p[2].update(runs=2, reproduced=0, pending=2)
json.dump(p, open(sys.argv[2], "w"))
PYEOF
culprit "jobs spent default to the runs and pending runs between; a pending probe is waited for" 0 \
    'o["jobs_left"] == 111 and o["range"] == ["'$GOOD'", "a00000000004"] and o["probe"] is None and o["reason"] == "waiting"' \
    -- --pushes "$work/spent.json"
culprit "--jobs-spent overrides" 0 'o["jobs_left"] == 20' -- --pushes "$work/spent.json" --jobs-spent 100
culprit "--project outside culprit_projects: not searched" 0 \
    'o["status"] == "stopped" and o["reason"] == "project-not-searched"' -- --pushes "$work/six.json" --project try
culprit "--project autoland is searched" 0 'o["status"] == "searching"' -- --pushes "$work/six.json" --project autoland

# Configuration keys as defaults.
RETRIG_CULPRIT_PROJECTS='try*, autoland' "$BIN/retrig" culprit --pushes "$work/six.json" --project try-comm >"$work/out" 2>&1
grep -q '"status":"searching"' "$work/out" && ok "culprit_projects globs are used" || bad "culprit_projects: $(head -c 300 "$work/out")"
RETRIG_DECIDE_POLICY=adaptive "$BIN/retrig" culprit --pushes "$work/six.json" >"$work/out" 2>&1
grep -q '"policy":"adaptive"' "$work/out" && ok "decide_policy is the default --policy" || bad "decide_policy: $(head -c 300 "$work/out")"
RETRIG_CULPRIT_MAX_JOBS=1 "$BIN/retrig" culprit --pushes "$work/six.json" >"$work/out" 2>&1
grep -q '"reason":"budget-exhausted"' "$work/out" && ok "culprit_max_jobs is the default budget" || bad "culprit_max_jobs: $(head -c 300 "$work/out")"
t95=$("$BIN/retrig" culprit --pushes "$work/six.json" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["times"])')
t999=$(RETRIG_CULPRIT_CONFIDENCE=0.999 "$BIN/retrig" culprit --pushes "$work/six.json" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["times"])')
[ "${t999:-0}" -gt "${t95:-0}" ] && ok "culprit_confidence 0.999 asks for more runs ($t999 > $t95)" || bad "culprit_confidence: $t999 vs $t95"
RETRIG_CULPRIT_MAX_DEPTH=3 "$BIN/retrig" culprit --pushes "$work/six.json" >"$work/out" 2>&1; s=$?
[ $s = 1 ] && grep -q "culprit_max_depth is 3" "$work/out" && ok "a window deeper than culprit_max_depth is refused" \
    || bad "culprit_max_depth: exit $s $(head -c 300 "$work/out")"
RETRIG_CULPRIT_CONFIDENCE=1.5 "$BIN/retrig" culprit --pushes "$work/six.json" >"$work/out" 2>&1; s=$?
[ $s = 2 ] && grep -q "culprit_confidence" "$work/out" && ok "a bad culprit_confidence exits 2 naming the key" \
    || bad "bad culprit_confidence: exit $s $(head -c 300 "$work/out")"
"$BIN/retrig" config | grep -q "^culprit_confidence = 0.95$" && ok "retrig config prints culprit_confidence" \
    || bad "retrig config lacks culprit_confidence"

# The simulation: deterministic for a seed, and it prints its table.
"$BIN/retrig" culprit --simulate 3000 --seed 7 >"$work/sim1" 2>&1
"$BIN/retrig" culprit --simulate 3000 --seed 7 >"$work/sim2" 2>&1
"$BIN/retrig" culprit --simulate 3000 --seed 8 >"$work/sim3" 2>&1
if cmp -s "$work/sim1" "$work/sim2" && ! cmp -s "$work/sim1" "$work/sim3" \
    && grep -q "^| skipped pushes C | cases | correct" "$work/sim1" && grep -q "^| all | 3000 |" "$work/sim1"; then
    ok "the simulation is deterministic per seed and prints its table"
else
    bad "simulation: $(head -c 600 "$work/sim1")"
fi

"$BIN/retrig" culprit --simulate 2000 --seed 7 --policy adaptive >"$work/sim4" 2>&1
if grep -q "policy adaptive" "$work/sim4" && grep -q "^| all | 2000 |" "$work/sim4"; then
    ok "the simulation runs the adaptive rule"
else
    bad "adaptive simulation: $(head -c 600 "$work/sim4")"
fi

# Hostile input: exit 1 with a reason.
printf '[{"revision": ' >"$work/truncated.json"
culprit "truncated JSON" 1 "not JSON" -- --pushes "$work/truncated.json"
head -c 4096 /dev/urandom >"$work/random.bin"
culprit "binary garbage" 1 "not JSON" -- --pushes "$work/random.bin"
"$PY" -c 'print("[" * 100000 + "]" * 100000)' >"$work/deep.json"
culprit "deeply nested arrays" 1 "invalid pushes file" -- --pushes "$work/deep.json"
"$PY" - "$work/huge.json" <<'PYEOF'
import json, sys
p = [{"revision": "%012x" % (i + 1), "runs": 0, "reproduced": 0} for i in range(5000)]
p[-1].update(runs=1, reproduced=1)
json.dump(p, open(sys.argv[1], "w"))
PYEOF
culprit "an array of 5000 pushes" 1 "5000 pushes: at most 101" -- --pushes "$work/huge.json"
"$PY" -c 'import sys; sys.stdout.write("[" + " " * (2 * 1024 * 1024) + "]")' >"$work/big.json"
culprit "a 2 MiB file" 1 "too big" -- --pushes "$work/big.json"
"$PY" - "$work" <<'PYEOF'
import json, sys
w = sys.argv[1]
good = {"revision": "3f1c0aa8d1b2c3d4e5f60718293a4b5c6d7e8f90", "runs": 1, "reproduced": 0}
fail = {"revision": "9e8d7c6b5a40", "runs": 6, "reproduced": 6}
def save(name, middle):
    json.dump([good] + middle + [fail], open(f"{w}/{name}.json", "w"))
save("upper", [{"revision": "ABCDEF012345", "runs": 0, "reproduced": 0}])
save("shell", [{"revision": "$(rm -rf /)x", "runs": 0, "reproduced": 0}])
save("long", [{"revision": "a" * 4096, "runs": 0, "reproduced": 0}])
save("dup", [dict(good)])
save("counts", [{"revision": "0123456789ab", "runs": 2, "reproduced": 5}])
save("negative", [{"revision": "0123456789ab", "runs": -3, "reproduced": 0}])
save("typo", [{"revision": "0123456789ab", "runs": 2, "reproducd": 2}])
save("float", [{"revision": "0123456789ab", "runs": 1e300, "reproduced": 0}])
json.dump([good], open(f"{w}/one.json", "w"))
json.dump({"pushes": [good, fail]}, open(f"{w}/object.json", "w"))
json.dump([good, {"revision": "9e8d7c6b5a40", "runs": 3, "reproduced": 0}], open(f"{w}/passing.json", "w"))
PYEOF
culprit "an uppercase revision" 1 'push 1: \\"revision\\" must be 12 or 40 lowercase hex' -- --pushes "$work/upper.json"
culprit "a revision with shell characters" 1 "push 1: .*revision" -- --pushes "$work/shell.json"
culprit "a 4096-character revision" 1 "push 1: .*revision" -- --pushes "$work/long.json"
culprit "the same revision twice" 1 "is also push 0" -- --pushes "$work/dup.json"
culprit "reproduced more than runs" 1 "reproduced.* from 0 to 2" -- --pushes "$work/counts.json"
culprit "negative runs" 1 "runs.* must be an integer" -- --pushes "$work/negative.json"
culprit "a misspelt member" 1 "unknown member" -- --pushes "$work/typo.json"
culprit "runs a huge float" 1 "runs.* must be an integer" -- --pushes "$work/float.json"
culprit "a single push" 1 "at least the first push" -- --pushes "$work/one.json"
culprit "an object, not an array" 1 "expected an array" -- --pushes "$work/object.json"
culprit "a failing push that never reproduced" 1 "failing push" -- --pushes "$work/passing.json"
culprit "a missing file names it" 1 "nonexistent.json" -- --pushes "$work/nonexistent.json"
culprit "a folder" 1 "pushes file" -- --pushes "$work"
if grep -q '"ts"' "$work/out"; then bad "a log line reached stdout"; else ok "errors go to stderr only"; fi

# Usage errors: exit 2.
culprit "no --pushes nor --simulate" 2 "either --pushes FILE or --simulate N" --
culprit "both --pushes and --simulate" 2 "either" -- --pushes "$work/six.json" --simulate 10
culprit "--confidence out of range" 2 "confidence" -- --pushes "$work/six.json" --confidence 1
culprit "--confidence not a number" 2 "confidence" -- --pushes "$work/six.json" --confidence high
culprit "--threshold 0" 2 "threshold" -- --pushes "$work/six.json" --threshold 0
culprit "--history-failures above --history-runs" 2 "exceeds" -- --pushes "$work/six.json" --history-runs 3 --history-failures 4
culprit "--reproduction-rate 0" 2 "reproduction-rate" -- --pushes "$work/six.json" --reproduction-rate 0
culprit "--max-jobs negative" 2 "max-jobs" -- --pushes "$work/six.json" --max-jobs -1
culprit "--simulate 0" 2 "simulate" -- --simulate 0
culprit "--trust-first without --simulate" 2 "go with --simulate" -- --pushes "$work/six.json" --trust-first
culprit "--policy mozci" 2 "seed or adaptive" -- --pushes "$work/six.json" --policy mozci
culprit "--trust-first with --policy adaptive" 2 "policy seed" -- --simulate 10 --policy adaptive --trust-first
culprit "a stray argument" 2 "unexpected argument" -- --pushes "$work/six.json" extra
culprit "an unknown option" 2 "usage: retrig culprit" -- --pushes "$work/six.json" --bogus
"$BIN/retrig" culprit --help >"$work/out" 2>&1 && grep -q "usage: retrig culprit" "$work/out" \
    && ok "--help prints the usage and exits 0" || bad "--help: $(head -c 300 "$work/out")"
"$BIN/retrig" help 2>&1 | grep -q "culprit --pushes FILE" && ok "retrig help lists culprit" \
    || bad "retrig help does not list culprit"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
