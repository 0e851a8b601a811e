#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli.sh - the command-line surface: --help, version, configuration errors (exit 2,
# naming the file or key), worker binaries, docs/configuration.md documents every key, and no secret is
# ever printed by any command (all output is scanned).
set -u
BIN=${RT_TEST_BIN_DIR:?}
SRC=${RT_TEST_SOURCE_DIR:?}
# Only our own variables: an unknown RETRIG_* variable is itself a configuration error.
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

# expect NAME STATUS PATTERN -- COMMAND...: runs the command, checks exit status and that
# the combined output matches the extended regular expression PATTERN.
expect() {
    local name=$1 status=$2 pattern=$3; shift 4
    "$@" >"$work/out" 2>&1; local got=$?
    cat "$work/out" >>"$work/all-output"
    if [ "$got" != "$status" ]; then bad "$name: exit $got, expected $status: $(head -c 400 "$work/out")"; return; fi
    if ! grep -Eq -- "$pattern" "$work/out"; then bad "$name: output lacks /$pattern/: $(head -c 400 "$work/out")"; return; fi
    ok "$name"
}

expect "retrig --help" 0 "usage: retrig" -- "$BIN/retrig" --help
expect "retrig help" 0 "migrate" -- "$BIN/retrig" help
expect "retrig version" 0 "^retrig [0-9]+\.[0-9]+\.[0-9]+" -- "$BIN/retrig" version
expect "retrig --version" 0 "^retrig [0-9]+\.[0-9]+\.[0-9]+" -- "$BIN/retrig" --version
expect "no command is a usage error" 2 "usage" -- "$BIN/retrig"
expect "unknown command" 2 "unknown command" -- "$BIN/retrig" frobnicate
# Every command `retrig help` names is one the tool runs (the help and the dispatch are one
# table in cli/main.c): each answers --help.
for command in $("$BIN/retrig" help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/ {print $1}' | sort -u); do
    expect "retrig $command --help" 0 "." -- "$BIN/retrig" "$command" --help
done
expect "missing RETRIG_CONFIG file names it" 2 "/nonexistent/retrig.conf" -- \
    env RETRIG_CONFIG=/nonexistent/retrig.conf "$BIN/retrig" config
mkdir "$work/dir.conf"
expect "unreadable RETRIG_CONFIG (a folder) names it" 2 "dir.conf" -- \
    env RETRIG_CONFIG="$work/dir.conf" "$BIN/retrig" config
printf 'amqp_prefetch = 3\nredis_ulr = redis://x\n' >"$work/unknown.conf"
expect "unknown key names the key" 2 "unknown configuration key 'redis_ulr'" -- \
    env RETRIG_CONFIG="$work/unknown.conf" "$BIN/retrig" config
printf 'http_max_attempts = many\n' >"$work/badvalue.conf"
expect "bad value names the key" 2 "http_max_attempts" -- "$BIN/retrig" --config "$work/badvalue.conf" config
expect "bad environment value names the variable" 2 "RETRIG_AMQP_PREFETCH" -- \
    env RETRIG_AMQP_PREFETCH=0 "$BIN/retrig" config
expect "unknown environment variable names it" 2 "RETRIG_REDIS_ULR" -- \
    env RETRIG_REDIS_ULR=redis://x "$BIN/retrig" config
expect "environment overrides the file" 0 "amqp_prefetch = 9" -- \
    env RETRIG_CONFIG="$SRC/deploy/local/retrig.conf" RETRIG_AMQP_PREFETCH=9 "$BIN/retrig" config

for w in classify retrigger decide perf history; do
    expect "retrig-$w --help" 0 "usage: retrig-$w" -- "$BIN/retrig-$w" --help
    expect "retrig-$w --version" 0 "^retrig-$w [0-9]+\." -- "$BIN/retrig-$w" --version
    expect "retrig-$w bad config exits 2" 2 "unknown configuration key 'bogus'" -- \
        env RETRIG_BOGUS=1 "$BIN/retrig-$w" --check-config
    expect "retrig-$w rejects stray arguments" 2 "unexpected argument" -- "$BIN/retrig-$w" extra
done

# Every configuration key is documented in docs/configuration.md with its environment variable.
"$BIN/retrig" config --keys >"$work/keys" 2>&1 || bad "retrig config --keys failed"
while IFS=$'\t' read -r key env default help; do
    if grep -q "\`$key\`" "$SRC/docs/configuration.md" && grep -q "$env" "$SRC/docs/configuration.md"; then
        ok "docs/configuration.md documents $key"
    else
        bad "docs/configuration.md does not document $key ($env)"
    fi
done <"$work/keys"

# Secrets: run commands that print configuration and errors with known secrets in every
# place a secret can come from, then scan everything they printed.
token=TcToKeN-5e3f1a2b9c
pulse_password=PuLsEpAsS-77aa31
db_password=DbPaSs-4c2d19
printf '%s\n' "$token" >"$work/token"
printf '%s\n' "$pulse_password" >"$work/pulse"
: >"$work/all-output"
secret_env=(RETRIG_TASKCLUSTER_ACCESS_TOKEN="$token" RETRIG_TASKCLUSTER_CLIENT_ID=project/retrig
            RETRIG_PULSE_URL="amqp://retrig:$pulse_password@127.0.0.1:1/"
            RETRIG_DATABASE_URL="postgresql://retrig:$db_password@127.0.0.1:1/retrig?connect_timeout=2"
            RETRIG_REDIS_URL="redis://:$db_password@127.0.0.1:1/0")
# retrig errorsummary replays issue 17's completeness and mozlog rules offline.
ES=$SRC/tests/fixtures/errorsummary
expect "errorsummary: a group listed between finished groups is not run, the run complete" 0 \
    '"kind":"test-failure".*"complete":true.*"groups_not_run":\["browser/components/tests/browser/whats_new_page/browser.ini"\]' \
    -- "$BIN/retrig" errorsummary "$ES/mochitest-browser-chrome_errorsummary.log"
printf '%s\n' '{"action": "test_groups", "groups": ["a.ini", "b.ini"]}' \
    '{"action": "test_result", "test": "a/t.js", "group": "a.ini", "status": "FAIL", "expected": "PASS"}' \
    '{"action": "group_result", "group": "a.ini", "status": "ERROR"}' >"$work/partial.log"
expect "errorsummary: the last listed group without its result is incomplete, and named" 0 \
    '"kind":"infra".*"incomplete":"group-without-result","groups_without_result":\["b.ini"\]' \
    -- "$BIN/retrig" errorsummary "$work/partial.log"
: >"$work/empty.log"
expect "errorsummary: an empty file is incomplete" 0 '"kind":"infra".*"incomplete":"no-test-groups"' \
    -- "$BIN/retrig" errorsummary "$work/empty.log"
printf '%s\n' '{"action": "test_groups", "groups": ["a.ini"]}' \
    '{"action": "test_result", "test": "a/t.js", "group": "a.ini", "status": "OK"}' \
    '{"action": "group_result", "group": "a.ini", "status": "OK"}' >"$work/noexpected.log"
expect "errorsummary: a result without expected is an expected one" 0 '"kind":"pass".*"failures":\[\]' \
    -- "$BIN/retrig" errorsummary "$work/noexpected.log"
expect "config prints secrets as ***" 0 "taskcluster_access_token = \*\*\*" -- \
    env "${secret_env[@]}" "$BIN/retrig" config
expect "config with secret files" 0 "pulse_url = amqp://retrig:\*\*\*@" -- \
    env RETRIG_TASKCLUSTER_ACCESS_TOKEN_FILE="$work/token" RETRIG_PULSE_PASSWORD_FILE="$work/pulse" \
    RETRIG_PULSE_URL=amqp://retrig@127.0.0.1:1/ "$BIN/retrig" config
expect "migrate against an unreachable database fails without the password" 1 "." -- \
    env "${secret_env[@]}" "$BIN/retrig" migrate
# A person at a terminal reads text, with a hint; a machine reads JSON (the default when
# stderr is not a terminal); the secret is in neither.
expect "text errors for people: what failed, where, and a hint" 1 \
    "^retrig: cannot connect to Postgres at 127\.0\.0\.1:1/retrig: " -- \
    env "${secret_env[@]}" "$BIN/retrig" --log-format text decisions
if grep -q "^hint: is Postgres running" "$work/out"; then ok "the text error has a hint"; else bad "no hint: $(cat "$work/out")"; fi
expect "errors are JSON lines when stderr is not a terminal" 1 \
    '^\{"ts":"[^"]+","level":"error","prog":"retrig","msg":"cannot connect to Postgres"' -- \
    env "${secret_env[@]}" "$BIN/retrig" decisions
if command -v script >/dev/null; then
    expect "text on a terminal by default" 0 "^retrig: cannot connect to Postgres" -- \
        script -qec "env ${secret_env[*]} $BIN/retrig decisions; exit 0" /dev/null
fi
expect "log_format must be auto, json or text" 2 "log_format" -- \
    env RETRIG_LOG_FORMAT=xml "$BIN/retrig" config
expect "--log-format must be auto, json or text" 2 "log-format" -- "$BIN/retrig" --log-format xml config
printf 'taskcluster_access_token = %s\nbad_key = 1\n' "$token" >"$work/secret.conf"
expect "config error in a file holding a secret" 2 "bad_key" -- \
    env RETRIG_CONFIG="$work/secret.conf" "$BIN/retrig" config
for w in classify retrigger decide perf history; do
    env "${secret_env[@]}" RETRIG_LOG_LEVEL=debug "$BIN/retrig-$w" --check-config >>"$work/all-output" 2>&1
    env "${secret_env[@]}" RETRIG_LOG_LEVEL=debug timeout 4 "$BIN/retrig-$w" >>"$work/all-output" 2>&1
done
for secret in "$token" "$pulse_password" "$db_password"; do
    if grep -q -- "$secret" "$work/all-output"; then
        bad "a secret was printed: $(grep -m1 -- "$secret" "$work/all-output" | head -c 300)"
    else
        ok "secret ${secret%%-*} never printed ($(wc -l <"$work/all-output") lines scanned)"
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
