#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# The README's promise, checked: `git clone` of the current HEAD into a fresh temporary folder
# that has no sibling folders, and there the build, the unit tests and `bash scripts/demo` end
# to end. The local services already running are reused (the demo gets a name of its own, so
# it shares no database, queue or key with anything else). The demo must print its
# decisions table (the regression's two tasks, one intermittent, one infra), one pooled
# regression verdict whose evidence has both failing configurations, retrig-perf's dry-run
# backfills, and the paths of both pages; then scripts/demo_github (a GitHub project's PR runs
# collected, its flaky tests, the issues it would open).
#
# Env: RT_TEST_SOURCE_DIR (the repository; its HEAD is cloned, so commit what you test).
set -euo pipefail

SOURCE="${RT_TEST_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
passed=0
failed=0
check() {
    if eval "$1"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $2"
    fi
}

outer=$(mktemp -d /tmp/retrig-fresh-XXXXXX)
name="fresh_$$"
# Leaves nothing behind: the demo's database, queues, Redis keys and state, and the clone.
cleanup() {
    local services="$SOURCE/deploy/local/services.sh" q
    bash "$services" psql -q -c "DROP DATABASE IF EXISTS retrig_$name" >/dev/null 2>&1 || true
    bash "$services" psql -q -c "DROP DATABASE IF EXISTS retrig_${name}_gh" >/dev/null 2>&1 || true
    for q in $(bash "$services" rabbitmqctl list_queues -q name 2>/dev/null | grep -E "^($name\.|queue/guest/$name\$)" || true); do
        bash "$services" rabbitmqctl delete_queue "$q" >/dev/null 2>&1 || true
    done
    redis-cli -p 6380 --scan --pattern "$name:*" 2>/dev/null | xargs -r redis-cli -p 6380 DEL >/dev/null 2>&1 || true
    rm -rf "$outer" "${RT_LOCAL_DIR:-/tmp/retrig-local}/$name" "${RT_LOCAL_DIR:-/tmp/retrig-local}/${name}_gh"
}
trap cleanup EXIT
# The clone is the only thing in its parent folder: nothing beside it to read by accident.
clone="$outer/retrig"
git clone -q --no-hardlinks "$SOURCE" "$clone"
check '[ "$(ls -A "$outer")" = retrig ]' "the clone has no sibling folders"
check '[ "$(git -C "$clone" rev-parse HEAD)" = "$(git -C "$SOURCE" rev-parse HEAD)" ]' "the clone is at HEAD"
if [ -n "$(git -C "$SOURCE" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    echo "note: $SOURCE has uncommitted changes; this test runs the committed HEAD only"
fi

echo "== build in $clone"
build_log="$outer/build.log"
if cmake -S "$clone" -B "$clone/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRETRIG_WERROR=ON >"$build_log" 2>&1 &&
    cmake --build "$clone/build" -j "${RT_TEST_JOBS:-2}" >>"$build_log" 2>&1; then
    built=1
else
    built=0
    tail -n 40 "$build_log"
fi
check '[ "$built" = 1 ]' "the clone builds"

if [ "$built" = 1 ]; then
    echo "== unit tests in the clone"
    unit_log="$outer/unit.log"
    if ctest --test-dir "$clone/build" -L unit -j "${RT_TEST_JOBS:-2}" >"$unit_log" 2>&1; then
        unit=1
    else
        unit=0
        grep -E 'Failed|\*\*\*' "$unit_log" | head -20
    fi
    check '[ "$unit" = 1 ]' "the clone's unit tests pass"
    check 'grep -qE "100% tests passed, 0 tests failed out of [1-9]" "$unit_log"' "ctest ran the unit tests"

    echo "== bash scripts/demo in the clone (RT_DEMO_NAME=$name)"
    demo_log="$outer/demo.log"
    RT_DEMO_NAME="$name" RT_SKIP_DEPS=1 bash "$clone/scripts/demo" >"$demo_log" 2>&1 && demo=0 || demo=$?
    cat "$demo_log"
    check '[ "$demo" = 0 ]' "scripts/demo exits 0 (got $demo)"
    # The decisions table: a header, then one row per verdict.
    table=$(sed -n '/^verdict  *task  *label/,/^$/p' "$demo_log")
    check '[ -n "$table" ]' "the demo prints its decisions table"
    check '[ "$(grep -c "^regression " <<<"$table")" = 2 ]' "the regression's two tasks (two configurations)"
    check '[ "$(grep -c "^intermittent " <<<"$table")" = 1 ]' "one intermittent"
    check '[ "$(grep -c "^infra " <<<"$table")" = 1 ]' "one infra"
    # decide_policy = pooled: the regression's test failing on two configurations is one
    # pooled set, one verdict both tasks' decisions point at, with both configurations'
    # evidence (and retrig explain shows the same table).
    pooled=$(sed -n '/^pooled verdict: regression /,/^$/p' "$demo_log")
    check '[ "$(grep -c "^pooled verdict: regression " "$demo_log")" = 1 ]' "one pooled regression verdict"
    check 'grep -q ", 2 task decision(s) point at it$" <<<"$pooled"' "both regression tasks point at the pooled verdict"
    check 'grep -qE "^  android-em-7-0-x86_64/debug +failed " <<<"$pooled" &&
        grep -qE "^  linux1804-64-qr/opt +failed " <<<"$pooled"' "the pooled evidence has both failing configurations"
    check 'grep -q "^pooled verdict: intermittent " "$demo_log"' "the intermittent's own pooled verdict"
    # (whether the other configuration's row is marked as a member's set depends on whether
    # its task joined before the pooled set stopped settling: its failed run counts either way)
    check 'grep -qE "^    android-em-7-0-x86_64/debug +failed " "$demo_log" &&
        grep -qE "^    linux1804-64-qr/opt +failed " "$demo_log" &&
        grep -q "the seed rule on this task.s own runs: " "$demo_log"' \
        "retrig explain shows the pooled table and the seed verdict as a shadow"
    check 'grep -q "^Dashboard: .*/$name/dashboard.html" "$demo_log"' "the demo names its dashboard"
    check 'grep -q "^Decisions: .*/$name/decisions.html" "$demo_log"' "the demo names its sheriffs' page"
    check 'grep -qE "dashboard.html: [1-9][0-9]* tests \(all branches\)" "$demo_log"' \
        "the flaky-test page lists the seeded history's tests"
    check 'grep -q "retrig-perf --once" "$demo_log" && grep -qE "^    alert [0-9]+ .* dry-run" "$demo_log"' \
        "the demo runs retrig-perf over the recorded alerts"
    check 'grep -q "^seed-history: " "$demo_log"' "the demo seeds the test history"

    # The GitHub half (docs/github.md): collect a dask-like repository's PR
    # runs from the fake upstream, list its flaky tests, and say which issues it would open.
    echo "== bash scripts/demo_github in the clone (RT_DEMO_NAME=${name}_gh)"
    gh_log="$outer/demo_github.log"
    RT_DEMO_NAME="${name}_gh" RT_SKIP_DEPS=1 bash "$clone/scripts/demo_github" >"$gh_log" 2>&1 && gh=0 || gh=$?
    cat "$gh_log"
    check '[ "$gh" = 0 ]' "scripts/demo_github exits 0 (got $gh)"
    check 'grep -qE "^dask/distributed: [0-9]+ runs listed, [1-9][0-9]* attempts stored" "$gh_log"' \
        "collect-github stores the PR runs' attempts"
    check 'grep -qE "^dask/distributed: [0-9]+ runs listed, 0 attempts stored" "$gh_log"' \
        "a second collection reads only what is new"
    check 'grep -qE "^yes +[0-9]+ +[0-9]+ .*distributed/tests/" "$gh_log"' "retrig flakes names flaky tests"
    check 'grep -qE "would open: Flaky test: distributed/tests/" "$gh_log"' \
        "flaky-issues --dry-run says which issues it would open"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
