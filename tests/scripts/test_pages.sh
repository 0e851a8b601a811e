#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_pages.sh - the pages of `retrig report` in a real browser. On fresh databases of the
# local Postgres: `retrig seed-history --hostile` (the same rows on a second run, nothing
# added), hand-made decisions (a regression whose row carries p_regression, as a later
# migration will add it; a hostile intermittent; an undecided one; an infrastructure
# failure), budget ledger rows and retrig-perf backfills; then both pages, and a page of
# 2,000 tests. tests/support/pages_browser.py loads each page in headless Chromium through
# the DevTools protocol and checks what a person sees and does (see there); screenshots go
# next to the binaries (build/pages-flaky.png, build/pages-decisions.png). A missing
# chromium fails the test (scripts/install-deps.sh installs it). Drops its databases on exit.
set -u
BIN=${RT_TEST_BIN_DIR:?}
SRC=${RT_TEST_SOURCE_DIR:?}
PY=${RT_TEST_PYTHON:-/usr/bin/python3}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done

PG_HOST=127.0.0.1 PG_PORT=5433 PG_USER=retrig PG_PASSWORD=retrig
db="rt_test_pages_$$_${RANDOM}"
big="${db}_big"
url() { echo "postgresql://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$1"; }
export RETRIG_DATABASE_URL
RETRIG_DATABASE_URL=$(url "$db")
export RETRIG_BUDGET_LIMITS="linux*=40, *=100" RETRIG_PERF_BUDGET_LIMITS="linux=18, *=60"
UNTIL=2025-12-01T12:00:00Z
TH=https://treeherder.mozilla.org
work=$(mktemp -d)
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
admin() {
    PGPASSWORD=$PG_PASSWORD psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d retrig "$@"
}
sql() { PGPASSWORD=$PG_PASSWORD psql -X -Atq -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$db" "$@"; }
cleanup() {
    admin -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" -c "DROP DATABASE IF EXISTS \"$big\" WITH (FORCE)" \
        >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
admin -c "CREATE DATABASE \"$db\"" -c "CREATE DATABASE \"$big\"" || { echo "FAIL - cannot create the databases"; exit 1; }
"$BIN/retrig" migrate >/dev/null 2>&1 || { echo "FAIL - migrate"; exit 1; }

# ---- the seeded history: deterministic, idempotent ----
seed() { "$BIN/retrig" seed-history --seed 11 --days 30 --tests 300 --until "$UNTIL" --hostile "$@"; }
if seed >"$work/seed1.txt" 2>&1 && seed >"$work/seed2.txt" 2>&1; then
    runs=$(sed -n 's/^seed-history: \([0-9]*\) runs .*/\1/p' "$work/seed1.txt")
    if [ -n "$runs" ] && grep -q "($runs new)\|, $runs new)" "$work/seed1.txt" && grep -q ", 0 new)" "$work/seed2.txt" &&
        [ "$(tail -n +2 "$work/seed1.txt")" = "$(tail -n +2 "$work/seed2.txt")" ] &&
        [ "$(sql -c "SELECT count(*) FROM history_runs")" = "$runs" ]; then
        ok "seed-history writes $runs runs, and the same seed again adds nothing and plants the same"
    else
        bad "seed-history is not deterministic: $(head -3 "$work/seed1.txt") / $(head -3 "$work/seed2.txt")"
    fi
else
    bad "seed-history failed: $(tail -3 "$work/seed1.txt" "$work/seed2.txt")"
fi
same_rows=$(sql -c "SELECT md5(string_agg(run_key || run_at::text || revision, ',' ORDER BY run_key)) FROM history_runs")
RETRIG_DATABASE_URL=$(url "$big") "$BIN/retrig" migrate >/dev/null 2>&1
RETRIG_DATABASE_URL=$(url "$big") seed >/dev/null 2>&1
other_rows=$(PGPASSWORD=$PG_PASSWORD psql -X -Atq -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$big" \
    -c "SELECT md5(string_agg(run_key || run_at::text || revision, ',' ORDER BY run_key)) FROM history_runs")
if [ -n "$same_rows" ] && [ "$same_rows" = "$other_rows" ]; then ok "the same seed gives the same rows in another database"; else bad "seeded rows differ between databases"; fi
PGPASSWORD=$PG_PASSWORD psql -X -Atq -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$big" \
    -c "TRUNCATE history_runs CASCADE" >/dev/null
if [ "$(sql -c "SELECT count(*) FROM history_runs WHERE project LIKE 'try-<svg%' AND revision LIKE '%<script>%'")" -gt 0 ] &&
    [ "$(sql -c "SELECT count(DISTINCT test) FROM history_tests WHERE test LIKE '%<script>%' OR test LIKE '%\"quoted\"%'")" = 2 ]; then
    ok "--hostile writes hostile projects, revisions and test names"
else
    bad "--hostile wrote no hostile rows"
fi
expect_usage() {
    "$BIN/retrig" seed-history "$@" >"$work/out" 2>&1
    if [ $? = 2 ]; then ok "seed-history $* is a usage error"; else bad "seed-history $* did not exit 2: $(cat "$work/out")"; fi
}
expect_usage --tests 5
expect_usage --days 0
expect_usage --noise 0.9
expect_usage --until yesterday

# ---- decisions, an infrastructure failure, budgets and backfills ----
# A column of the decision row the page shows when present (migration 0024 adds it).
sql -c "ALTER TABLE decisions ADD COLUMN IF NOT EXISTS p_regression double precision" >/dev/null
sql >"$work/sql.log" 2>&1 <<'SQL' || bad "the decisions could not be written: $(cat "$work/sql.log")"
\set until '''2025-12-01T12:00:00Z'''
INSERT INTO retrigger_sets (id, project, revision, label, platform, original_task_id, original_run_id,
                            retrigger_count, status, created_at)
VALUES (1, 'autoland', 'b437ae030825a8ea9fa7a632b1fcb9becbe11f69',
        'test-linux1804-64-qr/opt-mochitest-browser-chrome-3', 'linux1804-64-qr',
        'QvtfxLLN1sx2YcyHTDT9MA', 0, 3, 'decided', timestamptz :until - interval '2 hours'),
       (2, 'try', '"><img src=x onerror=alert(''rev'')>', '<script>alert(''label'')</script>',
        'windows11-64 "quoted" & <i>', 'F3kCOPcZYYSU9gaF0MkX7A', 0, 5, 'decided',
        timestamptz :until - interval '4 hours'),
       (3, 'mozilla-central', '0123456789abcdef0123456789abcdef01234567',
        'test-macosx1100-64-qr/opt-xpcshell-2', 'macosx1100-64-qr', 'UndecidedTask000000000', 0, 5,
        'decided', timestamptz :until - interval '6 hours');
INSERT INTO retrigger_set_members (set_id, task_id, run_id, role, state, result)
VALUES (1, 'QvtfxLLN1sx2YcyHTDT9MA', 0, 'original', 'failed', NULL),
       (1, 'RetriggerOne000000000A', 0, 'retrigger', 'failed', 'same-failure'),
       (1, 'RetriggerTwo000000000A', 0, 'retrigger', 'failed', 'same-failure'),
       (1, 'RetriggerThree0000000A', 0, 'retrigger', 'failed', 'other-failure'),
       (2, 'HostileRetrigger00000A', 0, 'retrigger', 'completed', 'passed');
INSERT INTO retrigger_actions (set_id, action_name, decision_task_id, dry_run, outcome, action_task_id)
VALUES (1, 'retrigger-multiple', 'HkX-TbGXQaSX4ucqGMQNBA', false, 'triggered', 'ActionTask00000000000A');
INSERT INTO decisions (set_id, verdict, reason, evidence, classification_id, failure_seen_at,
                       retriggers_requested_at, decided_at, p_regression)
VALUES (1, 'regression', 'reproduced', '{
  "threshold": 2,
  "counts": {"requested": 3, "compared": 3, "passed": 0, "failed": 3, "exceptions": 0, "no_data": 0, "pending": 0},
  "lines": [
    {"line": "TEST-UNEXPECTED-FAIL | devtools/client/netmonitor/src/har/test/browser_net_har_copy_all_as_har.js | There must be some page title -",
     "test": "devtools/client/netmonitor/src/har/test/browser_net_har_copy_all_as_har.js", "reproduced": 2,
     "reproduced_by": ["RetriggerOne000000000A", "RetriggerTwo000000000A"], "p_regression": 0.93,
     "history": {"window_days": 7, "runs": 418, "failures": 27, "pushes": 26, "main_pushes": 21, "branches": 7,
                 "prs": 0, "same_signature_pushes": 26, "flaky": true,
                 "first_failure": {"at": "2025-11-01T05:40:00Z", "project": "try", "push": "2100003", "revision": null}}},
    {"line": "TEST-UNEXPECTED-CRASH | /trusted-types/WorkerGlobalScope-eval.html | expected OK",
     "test": "/trusted-types/WorkerGlobalScope-eval.html", "reproduced": 1,
     "reproduced_by": ["RetriggerThree0000000A"],
     "history": {"window_days": 7, "runs": 0, "failures": 0, "pushes": 0, "main_pushes": 0, "branches": 0,
                 "prs": 0, "same_signature_pushes": 0, "flaky": false, "first_failure": null}}],
  "tracked": [],
  "runs": [{"task_id": "RetriggerOne000000000A", "run_id": 0, "state": "failed", "evidence": "failed", "reproduced": true, "job_id": 593283, "lines": 2},
           {"task_id": "RetriggerTwo000000000A", "run_id": 0, "state": "failed", "evidence": "failed", "reproduced": true, "job_id": 593284, "lines": 2},
           {"task_id": "RetriggerThree0000000A", "run_id": 0, "state": "failed", "evidence": "failed", "reproduced": true, "lines": 1}]
}', 1, timestamptz :until - interval '2 hours', timestamptz :until - interval '2 hours' + interval '10 seconds',
        timestamptz :until - interval '1 hour', 0.97),
       (2, 'intermittent', 'not-reproduced <b>bold</b>', '{
  "threshold": 2,
  "counts": {"requested": 5, "compared": 1, "passed": 1, "failed": 0, "exceptions": 0, "no_data": 0, "pending": 0},
  "lines": [{"line": "TEST-UNEXPECTED-FAIL | </td></tr><script>alert(''line'')</script> | <img src=x onerror=alert(2)>",
             "test": "</td></tr><script>alert(''line'')</script>", "reproduced": 0, "reproduced_by": [],
             "history": {"window_days": 7, "runs": 3, "failures": 1, "pushes": 1, "main_pushes": 0, "branches": 1,
                         "prs": 1, "same_signature_pushes": 1, "flaky": false,
                         "first_failure": {"at": "<b>x</b>", "project": "<script>alert(''p'')</script>", "push": "1", "revision": null}}}],
  "tracked": [{"line": "<script>alert(''tracked'')</script>", "bug": 1}],
  "runs": [{"task_id": "HostileRetrigger00000A", "run_id": 0, "state": "completed", "evidence": "passed", "reproduced": false}]
}', NULL, timestamptz :until - interval '4 hours', NULL, timestamptz :until - interval '3 hours', NULL),
       (3, 'undecided', 'deadline', '{"threshold": 2, "counts": {"compared": 0}, "lines": [], "runs": []}', NULL,
        timestamptz :until - interval '6 hours', NULL, timestamptz :until - interval '5 hours', NULL);
-- The regression's culprit search (issue 24): bisected to a push whose author is hostile.
UPDATE decisions SET culprit_status = 'found', culprit_reason = 'bisected',
       culprit_revision = 'c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ffe', culprit_pushlog_id = 88555,
       culprit_author = '<script>alert(''author'')</script>',
       culprit_range_first = 'c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ffe',
       culprit_range_last = 'c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ffe', culprit_jobs_spent = 12,
       culprit_probes = '[{"round": 1, "revision": "ba5eba11ba5eba11ba5eba11ba5eba11ba5eba11", "push_id": 88557,
                           "times": 6, "runs": 6, "reproduced": 0, "class": "good", "confirm": false},
                          {"round": 2, "revision": "c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ffe", "push_id": 88555,
                           "times": 6, "runs": 6, "reproduced": 5, "class": "bad", "confirm": false}]'
 WHERE set_id = 1;
INSERT INTO runs (task_id, run_id, state, task_queue_id, task_group_id, project, revision, label, platform,
                  verdict, verdict_reason, classified_at, resolved_at)
VALUES ('InfraTask0000000000000', 0, 'failed', 'gecko-t/t-linux-xlarge', 'HkX-TbGXQaSX4ucqGMQNBA', 'autoland',
        'b437ae030825a8ea9fa7a632b1fcb9becbe11f69', 'test-linux1804-64-qr/opt-mochitest-browser-chrome-7',
        'linux1804-64-qr', 'infra', 'incomplete-errorsummary', timestamptz :until - interval '30 minutes',
        timestamptz :until - interval '31 minutes');
INSERT INTO budget_ledger (platform, day, amount, idempotency_key, reason)
VALUES ('linux1804-64-qr', (timestamptz :until AT TIME ZONE 'UTC')::date - 2, 10, 'test:1', 'retrigger'),
       ('linux1804-64-qr', (timestamptz :until AT TIME ZONE 'UTC')::date - 1, 25, 'test:2', 'retrigger'),
       ('linux1804-64-qr', (timestamptz :until AT TIME ZONE 'UTC')::date, 3, 'test:3', 'retrigger'),
       ('macosx1100-64-qr', (timestamptz :until AT TIME ZONE 'UTC')::date, 5, 'test:4', 'retrigger'),
       ('perf:linux', (timestamptz :until AT TIME ZONE 'UTC')::date, 18, 'perf-alert:177727', 'perf backfill');
INSERT INTO perf_summaries (summary_id, repository, framework_id, push_id, revision, created_at)
VALUES (38857, 'autoland', 13, 1260291, 'fc5bbd8e0a4fd3a2ed5ec84af66bdd0e0b77d63e', timestamptz :until - interval '5 hours');
INSERT INTO perf_alerts (alert_id, summary_id, signature_id, platform, family, is_regression, amount_pct,
                         jobs_scheduled, budget_day, dry_run, outcome, intent_at, finished_at)
VALUES (177727, 38857, 3777240, 'linux1804-64-shippable-qr', 'linux', true, 17.9, 9,
        (timestamptz :until AT TIME ZONE 'UTC')::date, true, 'dry-run', timestamptz :until - interval '2 hours', timestamptz :until - interval '2 hours'),
       (177724, 38857, 3777242, 'linux1804-64-shippable-qr', 'linux', false, 6.07, 9,
        (timestamptz :until AT TIME ZONE 'UTC')::date, true, 'dry-run', timestamptz :until - interval '2 hours', timestamptz :until - interval '2 hours');
SQL

# ---- the pages ----
if "$BIN/retrig" report --project gecko --until "$UNTIL" --out "$work/flaky.html" --link decisions.html \
    --treeherder "$TH" >"$work/out" 2>&1; then ok "report writes the flaky-test page: $(cat "$work/out")"; else bad "report: $(cat "$work/out")"; fi
if "$BIN/retrig" report --decisions --until "$UNTIL" --since 14d --out "$work/decisions.html" --link flaky.html \
    --treeherder "$TH" >"$work/out" 2>&1 && grep -q "3 decisions, 1 infra failures, 2 backfills" "$work/out"; then
    ok "report --decisions writes the sheriffs' page: $(cat "$work/out")"
else
    bad "report --decisions: $(cat "$work/out")"
fi
if grep -q "Which push broke it" "$work/decisions.html" && grep -q "culprit search <b>found</b> (bisected)" "$work/decisions.html" \
    && grep -q "revision=c0ffee0c0ffee0c0ffee0c0ffee0c0ffee0c0ffe" "$work/decisions.html" \
    && grep -q "pushlog 88555" "$work/decisions.html" && grep -q "ba5eba11ba5eba11" "$work/decisions.html" \
    && ! grep -q "<script>alert('author')" "$work/decisions.html"; then
    ok "the sheriffs' page shows the regression's culprit, its Treeherder link and its probes"
else
    bad "the sheriffs' page does not show the culprit: $(grep -o 'Which push broke it.\{0,400\}' "$work/decisions.html")"
fi
"$BIN/retrig" report --decisions --out "$work/x.html" --treeherder 'javascript:alert(1)//' >"$work/out" 2>&1
if grep -q "not a plain http(s) URL" "$work/out" && ! grep -q "javascript:" "$work/x.html"; then
    ok "a Treeherder URL that is not http(s) gives no links"
else
    bad "--treeherder javascript: was used: $(cat "$work/out")"
fi
# 2,000 tests: the page holds at most --limit (default 2000) of them.
RETRIG_DATABASE_URL=$(url "$big") "$BIN/retrig" seed-history --seed 12 --until "$UNTIL" --tests 2400 --noise 0.003 \
    >/dev/null 2>&1 || bad "seed-history of 2,400 tests"
# The page until the end of UNTIL's UTC day, as retrig report reads by default (no --until): whole
# days, from the per-day rollup (migrations/0020); the pages above read the raw rows.
if RETRIG_DATABASE_URL=$(url "$big") "$BIN/retrig" report --project gecko --until "$(date -u -d "${UNTIL%T*} + 1 day" +%Y-%m-%dT00:00:00Z)" --out "$work/big.html" \
    --treeherder "$TH" >"$work/out" 2>&1 && grep -q "^.*: 2000 tests (all branches)" "$work/out"; then
    ok "report of 2,000 tests: $(cat "$work/out"), $(stat -c %s "$work/big.html") bytes"
else
    bad "report of 2,000 tests: $(cat "$work/out")"
fi

# ---- in the browser ----
rm -f "$BIN/../pages-flaky.png" "$BIN/../pages-decisions.png"
"$PY" "$SRC/tests/support/pages_browser.py" --work "$work" --shots "$BIN/.." >"$work/browser.txt" 2>&1
browser=$?
cat "$work/browser.txt"
b_passed=$(sed -n 's/^# \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$work/browser.txt")
b_failed=$(sed -n 's/^# \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$work/browser.txt")
passed=$((passed + ${b_passed:-0}))
failed=$((failed + ${b_failed:-0}))
[ "$browser" = 0 ] || [ "${b_failed:-0}" != 0 ] || bad "the browser checks exited $browser"
[ -n "$b_passed" ] || bad "the browser checks printed no summary"
for shot in pages-flaky.png pages-decisions.png; do
    if [ -s "$BIN/../$shot" ]; then ok "screenshot: $(readlink -f "$BIN/../$shot")"; else bad "no screenshot $shot"; fi
done

echo "# $passed passed, $failed failed"
[ "$failed" = 0 ]
