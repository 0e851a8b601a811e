#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_perf_report.sh - `retrig perf-report` on a fresh database of the local Postgres
# holding a hand-checkable day of retrig-perf: backfills on linux, windows10 and android
# with their budget ledger entries and follow-up states (done, pending, failed with two
# reasons), an already-backfilled alert and one from another day. Checks the JSON figures
# per family and in total, the failures with their reasons, the table, the --day filter
# and the usage errors. Creates its own database, drops it on exit.
set -u
BIN=${RT_TEST_BIN_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done

PG_HOST=127.0.0.1 PG_PORT=5433 PG_USER=retrig PG_PASSWORD=retrig
db="rt_test_perf_report_$$_${RANDOM}"
export RETRIG_DATABASE_URL="postgresql://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$db"
work=$(mktemp -d)
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
admin() {
    PGPASSWORD=$PG_PASSWORD psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d retrig "$@"
}
sql() { PGPASSWORD=$PG_PASSWORD psql -X -Atq -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$db" -c "$1"; }
cleanup() {
    admin -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
admin -c "CREATE DATABASE \"$db\"" || { echo "FAIL - cannot create database $db"; exit 1; }
"$BIN/retrig" migrate >/dev/null 2>&1 || { echo "FAIL - migrate"; exit 1; }

day=2026-03-14
other=2026-03-13
# alert family platform outcome jobs_scheduled budget_day followup_state reason jobs completed
alert() {
    local reason=NULL bday=NULL action=NULL iday=$6
    [ "$6" = - ] && iday=$day
    [ "$8" != - ] && reason="'$8'"
    [ "$6" != - ] && bday="'$6'"
    [ "$4" = triggered ] || [ "$4" = already-backfilled ] && action="'act$1'"
    local state=NULL
    [ "$7" != - ] && state="'$7'"
    sql "INSERT INTO perf_alerts (alert_id, summary_id, signature_id, platform, family,
         is_regression, amount_pct, jobs_scheduled, budget_day, dry_run, outcome, action_task_id,
         intent_at, finished_at, followup_state, followup_reason, followup_detail, followup_jobs,
         followup_completed, followup_settled_at)
         VALUES ($1, 1, $1, '$3', '$2', true, 10, $5, $bday, false, '$4', $action,
         '$iday 10:00:00+00', '$iday 10:00:01+00', $state, $reason,
         'detail of $1', $9, ${10}, CASE WHEN $state IN ('done', 'failed') THEN now() END)" >/dev/null
    if [ "$5" -gt 0 ]; then
        sql "INSERT INTO budget_ledger (platform, day, amount, idempotency_key, reason)
             VALUES ('perf:$2', '$6', $5, 'perf-alert:$1', 'test')" >/dev/null
    fi
}
sql "INSERT INTO perf_summaries (summary_id, repository, framework_id) VALUES (1, 'autoland', 13)" >/dev/null
alert 101 linux linux1804-64-shippable-qr triggered 9 $day done - 9 9
alert 102 linux linux1804-64-qr triggered 9 $day failed jobs-failed 9 7
alert 103 windows10 windows10-64-shippable-qr triggered 9 $day pending - 4 2
alert 104 android android-hw-a51-11-0-aarch64-shippable triggered 9 $day failed no-data 9 9
alert 105 linux linux1804-64-shippable triggered 0 - - - 0 0
sql "UPDATE perf_alerts SET outcome = 'already-backfilled' WHERE alert_id = 105" >/dev/null
alert 106 linux linux1804-64-shippable-qr triggered 9 $other failed action-failed 0 0

"$BIN/retrig" perf-report --day $day --format json >"$work/day.json" 2>"$work/err"
rc=$?
if [ $rc = 0 ]; then ok "perf-report --format json exits 0"; else bad "perf-report exit $rc: $(cat "$work/err")"; fi
"$PY" - "$work/day.json" <<'PYEOF' && ok "json figures per family, totals and failures" || bad "json figures"
import json, sys
doc = json.load(open(sys.argv[1]))
fam = {f["family"]: f for f in doc["families"]}
def eq(what, got, want):
    if got != want:
        sys.exit("%s: got %r, want %r" % (what, got, want))
eq("day", doc["day"], "2026-03-14")
l = fam["linux"]
eq("linux limit", l["limit"], 600)
eq("linux used", l["budget_used"], 18)
eq("linux backfills", l["backfills"], 2)
eq("linux scheduled", l["jobs_scheduled"], 18)
eq("linux executed", l["jobs_executed"], 16)
eq("linux done/pending/failed", (l["done"], l["pending"], l["failed"]), (1, 0, 1))
eq("linux already", l["already_backfilled"], 1)
a = fam["android"]
eq("android limit", a["limit"], 100)
eq("android used", a["budget_used"], 9)
eq("android failed", a["failed"], 1)
w = fam["windows10"]
eq("windows10 pending", w["pending"], 1)
eq("windows10 executed", w["jobs_executed"], 2)
eq("osx present with nothing", (fam["osx"]["budget_used"], fam["osx"]["backfills"]), (0, 0))
t = doc["totals"]
eq("total used", t["budget_used"], 36)
eq("total executed", t["jobs_executed"], 27)
eq("total failed", t["failed"], 2)
reasons = {f["alert_id"]: f["reason"] for f in doc["failures"]}
eq("failures", reasons, {102: "jobs-failed", 104: "no-data"})
f102 = [f for f in doc["failures"] if f["alert_id"] == 102][0]
eq("failure fields", (f102["family"], f102["action_task_id"], f102["jobs"], f102["jobs_completed"]),
   ("linux", "act102", 9, 7))
PYEOF

"$BIN/retrig" perf-report --day $day >"$work/table" 2>&1
if grep -Eq '^linux +600 +18 +2 +18 +16 +1 +0 +1 +1 +0$' "$work/table" &&
    grep -Eq '^102 +linux +jobs-failed +act102 +detail of 102$' "$work/table" &&
    grep -q 'needing manual work: 2' "$work/table"; then
    ok "table shows the family row and the failures"
else
    bad "table: $(cat "$work/table")"
fi

"$BIN/retrig" perf-report --day $other --format json >"$work/other.json" 2>/dev/null
"$PY" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
fam = {f["family"]: f for f in doc["families"]}
assert fam["linux"]["budget_used"] == 9 and fam["linux"]["failed"] == 1, fam["linux"]
assert [f["reason"] for f in doc["failures"]] == ["action-failed"], doc["failures"]
assert fam["android"]["budget_used"] == 0
' "$work/other.json" && ok "--day selects that day only" || bad "--day $other: $(cat "$work/other.json")"

"$BIN/retrig" perf-report --day 2026-02-30 >/dev/null 2>&1
rc=$?; [ $rc = 2 ] && ok "an impossible day is a usage error" || bad "--day 2026-02-30 exit $rc"
"$BIN/retrig" perf-report --format xml >/dev/null 2>&1
rc=$?; [ $rc = 2 ] && ok "an unknown format is a usage error" || bad "--format xml exit $rc"
RETRIG_DATABASE_URL="postgresql://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/${db}_missing" \
    "$BIN/retrig" perf-report >/dev/null 2>&1
rc=$?; [ $rc = 1 ] && ok "an unreachable database exits 1" || bad "missing database exit $rc"

echo "# $passed passed, $failed failed"
[ "$failed" = 0 ]
