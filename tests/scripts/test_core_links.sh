#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# The layering holds (docs/ARCHITECTURE.md): common/core links only jansson, libxml2 and
# libcrypto, and its unit tests need none of librabbitmq, hiredis, libpq, libcurl or
# libmicrohttpd; a core file that includes an I/O or store header does not compile; the store
# (common/store) uses the core and common/io, never the layer above, and common/io never uses
# the store; and every source file of common/ is in the layer its folder names.
# Env: RT_TEST_SOURCE_DIR, RT_TEST_BIN_DIR (build/bin; the unit tests are in ../tests).
set -euo pipefail

SOURCE="${RT_TEST_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
BIN="${RT_TEST_BIN_DIR:-$SOURCE/build/bin}"
TESTS="$BIN/../tests"
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

# The core's unit tests, as tests/CMakeLists.txt lists them.
core_tests=$(sed -n '/^set(RT_CORE_UNIT_TESTS/,/)/p' "$SOURCE/tests/CMakeLists.txt" |
    tr ' ()' '\n\n\n' | grep '^test_' || true)
check '[ "$(wc -w <<<"$core_tests")" -ge 10 ]' "tests/CMakeLists.txt lists the core's unit tests"
io_libs='librabbitmq|libhiredis|libpq|libcurl|libmicrohttpd'
for t in $core_tests; do
    bin="$TESTS/unit_$t"
    check '[ -x "$bin" ]' "$bin is built"
    [ -x "$bin" ] || continue
    needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    check '! grep -qE "$io_libs" <<<"$needed"' "unit_$t needs no I/O library (it needs: $(tr '\n' ' ' <<<"$needed"))"
done
# The other way round, so that the check above can fail: a test of the I/O layer does.
if [ -x "$TESTS/unit_test_metrics" ]; then
    check 'readelf -d "$TESTS/unit_test_metrics" | grep -qE "$io_libs"' "unit_test_metrics (I/O layer) needs the I/O libraries"
fi

# A core file that includes an I/O or configuration header does not compile.
cc=${CC:-cc}
probe=$(mktemp --suffix=.c)
trap 'rm -f "$probe"' EXIT
for h in common/io/log.h common/io/pg.h common/store/sets.h common/config.h common/worker.h; do
    printf '#include "%s"\nint rt_probe(void);\nint rt_probe(void) { return 0; }\n' "$h" >"$probe"
    check '! "$cc" -DRT_CORE_BUILD -D_GNU_SOURCE -I"$SOURCE" $(pkg-config --cflags jansson libpq hiredis librabbitmq 2>/dev/null) -fsyntax-only "$probe" 2>/dev/null' \
        "a core file including $h does not compile"
    check '"$cc" -D_GNU_SOURCE -I"$SOURCE" $(pkg-config --cflags jansson libpq hiredis librabbitmq 2>/dev/null) -fsyntax-only "$probe"' \
        "outside the core, $h compiles"
done

# Every core source includes only core headers (the compiler enforces it; this names the file).
bad=$(grep -lE '#include "common/(io/|store/|[a-z_]+\.h)' "$SOURCE"/common/core/*.[ch] || true)
check '[ -z "$bad" ]' "core sources include only common/core headers: $bad"
# No file of common/io includes the layer above it (common/config.h, worker.h, options.h, ...):
# the options structs are filled from the configuration in common/options.c.
bad=$(grep -E '#include "common/[a-z_]+\.h"' "$SOURCE"/common/io/*.[ch] | grep -v '"common/not_core.h"' || true)
check '[ -z "$bad" ]' "common/io includes nothing of the layer above it: $bad"
# The store sits between io and the workers: it includes the core, common/io (pg.h) and
# itself, nothing of the layer above (config.h, worker.h, options.h, ...); io never includes it.
bad=$(grep -E '#include "common/' "$SOURCE"/common/store/*.[ch] |
    grep -vE '"common/(core/|io/|store/|not_core\.h)' || true)
check '[ -z "$bad" ]' "common/store includes only the core, common/io and itself: $bad"
check 'grep -q "common/io/pg.h" "$SOURCE/common/store/sets.h"' "common/store/sets.h uses common/io/pg.h"
bad=$(grep -lE '#include "common/store/' "$SOURCE"/common/io/*.[ch] || true)
check '[ -z "$bad" ]' "common/io includes nothing of common/store: $bad"
# Every library source is listed in common/CMakeLists.txt, in its folder's layer.
for f in "$SOURCE"/common/core/*.c "$SOURCE"/common/io/*.c "$SOURCE"/common/store/*.c \
    "$SOURCE"/common/*.c; do
    rel=${f#"$SOURCE/common/"}
    check 'grep -qE "^  $rel\)?\$" "$SOURCE/common/CMakeLists.txt"' "common/$rel is listed in common/CMakeLists.txt"
done

# Each binary links only the libraries it uses: Redis only for the workers that hold budgets
# and claims (common/worker_redis.c, named by their setups), none for retrig-history or the
# CLI; libxml2 and libzip (JUnit artifacts) only for the CLI.
needed_of() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
for b in retrig-classify retrig-retrigger retrig-decide retrig-perf retrig-history retrig; do
    check '[ -x "$BIN/$b" ]' "$BIN/$b is built"
done
if [ -x "$BIN/retrig-history" ] && [ -x "$BIN/retrig" ]; then
    for b in retrig-history retrig; do
        n=$(needed_of "$BIN/$b")
        check '! grep -q libhiredis <<<"$n"' "$b needs no hiredis (it needs: $n)"
    done
    for b in retrig-classify retrig-retrigger retrig-perf; do
        n=$(needed_of "$BIN/$b")
        check 'grep -q libhiredis <<<"$n"' "$b needs hiredis, so that the check above can fail (it needs: $n)"
    done
    for b in retrig-classify retrig-retrigger retrig-decide retrig-perf retrig-history; do
        n=$(needed_of "$BIN/$b")
        check '! grep -qE "libxml2|libzip" <<<"$n"' "$b needs neither libxml2 nor libzip (it needs: $n)"
    done
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
