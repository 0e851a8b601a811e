#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_cli_github.sh - the command-line surface of `retrig collect-github` and `retrig
# flaky-issues`: --help, usage errors (exit 2 naming the option), configuration errors, a
# GitHub API that cannot be reached (exit 1), a token given by file, by key or by the
# environment that is never printed, even at log level debug and in error messages.
set -u
BIN=${RT_TEST_BIN_DIR:?}
for v in $(env | grep -o '^RETRIG_[A-Z_]*'); do unset "$v"; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
expect() {
    local name=$1 status=$2 pattern=$3; shift 4
    "$@" >"$work/out" 2>&1; local got=$?
    cat "$work/out" >>"$work/all-output"
    if [ "$got" != "$status" ]; then bad "$name: exit $got, expected $status: $(head -c 400 "$work/out")"; return; fi
    if ! grep -Eq -- "$pattern" "$work/out"; then bad "$name: output lacks /$pattern/: $(head -c 400 "$work/out")"; return; fi
    ok "$name"
}

token="ghp_SecretTokenNeverPrinted_$$_$RANDOM"
printf '%s\n' "$token" >"$work/token"
# a port nothing listens on: the calls fail at once
closed="http://127.0.0.1:9"
export RETRIG_DATABASE_URL="postgresql://retrig:retrig@127.0.0.1:5433/retrig"

expect "collect-github --help" 0 "usage: retrig collect-github --repo OWNER/NAME" -- \
    "$BIN/retrig" collect-github --help
expect "collect-github --help names the token's permission" 0 "actions: read" -- \
    "$BIN/retrig" collect-github --help
expect "flaky-issues --help" 0 "usage: retrig flaky-issues --project OWNER/NAME" -- \
    "$BIN/retrig" flaky-issues --help
expect "collect-github needs --repo" 2 "usage" -- "$BIN/retrig" collect-github
expect "a bad --repo is named" 2 "--repo wants OWNER/NAME" -- \
    "$BIN/retrig" collect-github --repo "../etc"
expect "a bad --since is named" 2 "--since wants a number" -- \
    "$BIN/retrig" collect-github --repo a/b --since 7x
expect "a bad --max-requests is named" 2 "--max-requests wants" -- \
    "$BIN/retrig" collect-github --repo a/b --max-requests 0
expect "a bad --workflow is named" 2 "--workflow wants" -- \
    "$BIN/retrig" collect-github --repo a/b --workflow ../x.yaml
expect "a missing token file is named" 2 "github_token_file" -- \
    env RETRIG_GITHUB_TOKEN_FILE="$work/none" "$BIN/retrig" collect-github --repo a/b
expect "flaky-issues --dry-run and --apply together" 2 "usage" -- \
    "$BIN/retrig" flaky-issues --project a/b --dry-run --apply
expect "flaky-issues: a bad --now is named" 2 "--now wants" -- \
    "$BIN/retrig" flaky-issues --project a/b --now yesterday
expect "flaky_issue_tracker is checked" 2 "flaky_issue_tracker" -- \
    env RETRIG_FLAKY_ISSUE_TRACKER=jira "$BIN/retrig" flaky-issues --project a/b
expect "bugzilla_components is checked" 2 "PREFIX=Product::Component" -- \
    env RETRIG_BUGZILLA_COMPONENTS="dom/=Core" "$BIN/retrig" flaky-issues --project a/b
expect "an unreachable GitHub API fails (token from --token-file)" 1 "cannot read the repository" -- \
    env RETRIG_GITHUB_API_URL="$closed" RETRIG_LOG_LEVEL=debug \
    "$BIN/retrig" collect-github --repo a/b --token-file "$work/token"
expect "an unreachable GitHub API fails (token from the environment)" 1 "cannot read the repository" -- \
    env RETRIG_GITHUB_API_URL="$closed" RETRIG_GITHUB_TOKEN="$token" RETRIG_LOG_LEVEL=debug \
    "$BIN/retrig" collect-github --repo a/b
expect "config shows the token as ***" 0 "github_token = \*\*\*" -- \
    env RETRIG_GITHUB_TOKEN_FILE="$work/token" "$BIN/retrig" config

if grep -q "$token" "$work/all-output"; then
    bad "the GitHub token was printed"
else
    ok "the GitHub token never appears in any output"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
