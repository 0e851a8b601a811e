#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_migrate.sh - `retrig migrate` against a fresh database on the local Postgres:
# applies everything, is a no-op the second time, --status lists what is applied (the SQL
# function files too), a changed migration is refused, and a wrong database password fails without being printed.
# Creates its own database and drops it on exit.
set -u
BIN=${RT_TEST_BIN_DIR:?}
SRC=${RT_TEST_SOURCE_DIR:?}
# Only our own variables: an unknown RETRIG_* variable is itself a configuration error.
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done

PG_HOST=127.0.0.1 PG_PORT=5433 PG_USER=retrig PG_PASSWORD=retrig
db="rt_test_cli_migrate_$$_${RANDOM}"
url="postgresql://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$db"
work=$(mktemp -d)
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

admin() {
    PGPASSWORD=$PG_PASSWORD psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" \
        -U "$PG_USER" -d retrig "$@"
}
cleanup() {
    admin -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
admin -c "CREATE DATABASE \"$db\"" || { echo "FAIL - cannot create database $db"; exit 1; }

# expect NAME STATUS PATTERN -- COMMAND...: runs the command, checks the exit status and
# that the combined output matches the extended regular expression PATTERN.
expect() {
    local name=$1 status=$2 pattern=$3; shift 4
    "$@" >"$work/out" 2>&1; local got=$?
    if [ "$got" != "$status" ]; then bad "$name: exit $got, expected $status: $(head -c 600 "$work/out")"; return; fi
    if ! grep -Eq -- "$pattern" "$work/out"; then bad "$name: output lacks /$pattern/: $(head -c 600 "$work/out")"; return; fi
    ok "$name"
}

migrate() { env RETRIG_DATABASE_URL="$url" "$BIN/retrig" migrate "$@"; }

expect "migrate --help" 0 "usage: retrig migrate" -- migrate --help
expect "unknown option is a usage error" 2 "usage: retrig migrate" -- migrate --frobnicate
expect "status of a new database lists 0001 as pending" 0 "^pending  0001_initial\.sql" -- \
    migrate --status
expect "status of a new database lists the SQL function files as pending" 0 \
    "^pending  function 30_history_flakes\.sql" -- migrate --status
expect "first run applies 0001_initial.sql" 0 "^applied 0001_initial\.sql" -- migrate
if grep -q "^applied function 30_history_flakes\.sql" "$work/out"; then
    ok "first run applies the SQL function files"
else
    bad "first run applied no function file: $(tail -n 3 "$work/out")"
fi
if grep -Eq "^done: [1-9][0-9]* applied, 0 already applied" "$work/out"; then
    ok "first run summary counts the applied files"
else
    bad "first run summary: $(cat "$work/out")"
fi
expect "second run applies nothing" 0 "^done: 0 applied, [1-9][0-9]* already applied" -- migrate
if grep -q "^applied " "$work/out"; then bad "second run printed an applied line"; else ok "second run printed no applied line"; fi
expect "status after migrating" 0 "^status: [1-9][0-9]* applied, 0 pending" -- migrate --status
expect "status after migrating: no function file pending" 0 \
    "^functions: [1-9][0-9]* applied, 0 pending" -- migrate --status
expect "status shows when 0001 was applied" 0 \
    "^applied  0001_initial\.sql  [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z  sha256 [0-9a-f]{12}" -- \
    migrate --status

# A copy whose applied file was edited: refused, naming the file, nothing applied.
mkdir "$work/migrations"
cp "$SRC"/migrations/*.sql "$work/migrations/"
echo "-- edited after it was applied" >>"$work/migrations/0001_initial.sql"
echo "CREATE TABLE never_created (id integer);" >"$work/migrations/9999_after_edit.sql"
expect "changed migration is refused, naming the file" 1 \
    "0001_initial\.sql changed after it was applied" -- migrate --dir "$work/migrations"
if [ "$(admin -d "$db" -Atc "SELECT to_regclass('never_created') IS NULL")" = t ]; then
    ok "nothing was applied after the refusal"
else
    bad "9999_after_edit.sql was applied despite the refusal"
fi
expect "missing --dir is an error naming it" 1 "$work/nonexistent" -- \
    migrate --dir "$work/nonexistent"

# A wrong password: non-zero exit, the server named, the password never printed.
secret="Wr0ng-Secret-Pw-$$"
expect "wrong database password fails naming the server" 1 "127\.0\.0\.1.*5433" -- \
    env RETRIG_DATABASE_URL="postgresql://$PG_USER:$secret@$PG_HOST:$PG_PORT/$db" \
    "$BIN/retrig" migrate
if grep -q -- "$secret" "$work/out"; then bad "the wrong password was printed: $(cat "$work/out")"; else ok "the password was not printed"; fi

echo "# $passed passed, $failed failed"
[ "$failed" = 0 ]
