#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_terminal.sh - stored text reaches the terminal escaped: a retrigger set whose
# label, failing groups, action error and decision lines hold terminal escapes (ESC
# sequences that clear the screen or set the window title, BEL, a C1 CSI, a bidi override,
# a newline that would forge a table row) is printed by `retrig explain`, `retrig decisions`
# and `retrig perf-report` with every one of them escaped, and by their JSON forms as \u
# escapes. Creates its own database, drops it on exit.
set -u
BIN=${RT_TEST_BIN_DIR:?}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done

PG_HOST=127.0.0.1 PG_PORT=5433 PG_USER=retrig PG_PASSWORD=retrig
db="rt_test_terminal_$$_${RANDOM}"
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

# E'...' strings: \x1b ESC, \x07 BEL, \u009b C1 CSI, \u202e right-to-left override.
evil="E'x\\x1b[2J\\x1b]0;pwned\\x07\\u009b31m\\u202eevil\\nFORGED ROW'"
task=AbCdEfGhIjKlMnOpQrStUv
sql "INSERT INTO retrigger_sets (project, revision, label, platform, original_task_id,
     original_run_id, retrigger_count, status, failing_groups)
     VALUES ('autoland', 'b437ae030825a8ea9fa7a632b1fcb9becbe11f69', 'test-' || $evil,
     'linux1804-64', '$task', 0, 5, 'decided', jsonb_build_array($evil))" >/dev/null
set_id=$(sql "SELECT id FROM retrigger_sets")
sql "INSERT INTO retrigger_actions (set_id, action_name, decision_task_id, dry_run, outcome, error)
     VALUES ($set_id, 'retrigger-multiple', 'HkX-TbGXQaSX4ucqGMQNBA', false, 'refused-hook', $evil)" >/dev/null
sql "INSERT INTO decisions (set_id, verdict, reason, evidence, failure_seen_at)
     VALUES ($set_id, 'regression', $evil,
     jsonb_build_object('lines', jsonb_build_array(jsonb_build_object('line', $evil,
       'reproduced', 2, 'reproduced_by', jsonb_build_array($evil)))), now())" >/dev/null
sql "INSERT INTO perf_summaries (summary_id, repository, framework_id) VALUES (1, 'autoland', 13)" >/dev/null
sql "INSERT INTO perf_alerts (alert_id, summary_id, signature_id, platform, family, is_regression,
     amount_pct, budget_day, dry_run, outcome, error, finished_at, followup_state, followup_reason,
     followup_detail) VALUES (7, 1, 7, 'linux1804-64', 'linux', true, 10, current_date, false,
     'triggered', $evil, now(), 'failed', 'no-data', $evil)" >/dev/null

# clean NAME FILE: no raw ESC, BEL, C1 CSI or RLO byte sequence, and the escapes are shown.
clean() {
    if grep -qP '\x1b|\x07|\xc2\x9b|\xe2\x80\xae' "$2"; then
        bad "$1 printed a raw control character: $(grep -aP '\x1b|\x07' "$2" | head -c 200 | od -c | head -3)"
    elif grep -q 'FORGED ROW' "$2" && grep -q '^FORGED ROW' "$2"; then
        bad "$1 printed a forged line"
    else
        ok "$1 escapes stored text"
    fi
}
"$BIN/retrig" explain "$task" >"$work/explain" 2>&1 || bad "explain exited $?"
clean "explain" "$work/explain"
grep -qF 'x\x1b[2J\x1b]0;pwned\x07\u009b31m\u202eevil\nFORGED ROW' "$work/explain" &&
    ok "explain shows the escapes" || bad "explain: $(head -c 400 "$work/explain")"
"$BIN/retrig" decisions --since 1d >"$work/table" 2>&1 || bad "decisions exited $?"
clean "decisions (table)" "$work/table"
"$BIN/retrig" decisions --since 1d --format json >"$work/json" 2>&1 || bad "decisions --format json exited $?"
clean "decisions (json)" "$work/json"
"$BIN/retrig" perf-report >"$work/perf" 2>&1 || bad "perf-report exited $?"
clean "perf-report (table)" "$work/perf"
"$BIN/retrig" perf-report --format json >"$work/perfjson" 2>&1 || bad "perf-report --format json exited $?"
clean "perf-report (json)" "$work/perfjson"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
