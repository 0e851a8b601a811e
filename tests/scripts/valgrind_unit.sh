#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# valgrind_unit.sh [BUILD_DIR] - runs every cmocka unit test binary of BUILD_DIR (default
# build/, must be a build without sanitizers) under valgrind memcheck: any invalid access, use
# of uninitialised memory or leak (definite, indirect or possible) fails it. Two at a time
# ($RT_TEST_JOBS). Prints "valgrind: N passed, F failed" and exits non-zero when F > 0.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.."
build=$(readlink -f "${1:-build}")
jobs=${RT_TEST_JOBS:-2}
command -v valgrind >/dev/null || {
    echo "valgrind_unit: valgrind is not installed" >&2
    exit 1
}
shopt -s nullglob
bins=("$build"/tests/unit_test_*)
[ ${#bins[@]} -gt 0 ] || {
    echo "valgrind_unit: no unit test binaries in $build/tests (build first)" >&2
    exit 1
}
if nm "${bins[0]}" 2>/dev/null | grep -q __asan_init; then
    echo "valgrind_unit: $build is a sanitizer build; valgrind needs a plain one" >&2
    exit 1
fi
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

one() {
    local bin="$1" name
    name=${bin##*/}
    if valgrind --quiet --error-exitcode=1 --leak-check=full --show-leak-kinds=all \
        --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
        --child-silent-after-fork=yes "$bin" >"$logdir/$name.log" 2>&1; then
        echo "pass $name"
    else
        echo "FAIL $name"
        cat "$logdir/$name.log"
    fi
}
export -f one
export logdir
printf '%s\n' "${bins[@]}" | xargs -P "$jobs" -I{} bash -c 'one "$1"' _ {} | tee "$logdir/results"
passed=$(grep -c '^pass ' "$logdir/results" || true)
failed=$(grep -c '^FAIL ' "$logdir/results" || true)
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
