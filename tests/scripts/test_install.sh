#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# test_install.sh - `cmake --install` lays retrig out as a package would: the six binaries in
# bin/, the migrations in share/retrig/migrations (where an installed retrig finds them with no
# configuration) and the SQL function files beside them in share/retrig/sql/functions, the systemd units pointing at the installed binaries, the example config.
set -euo pipefail
src=${RT_TEST_SOURCE_DIR:?}
build=$(dirname "${RT_TEST_BIN_DIR:?}")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cmake --install "$build" --prefix "$prefix" >/dev/null

for bin in retrig retrig-classify retrig-retrigger retrig-decide retrig-perf retrig-history; do
    [ -x "$prefix/bin/$bin" ] || fail "bin/$bin not installed"
done
expected=$(cd "$src/migrations" && ls ./*.sql | wc -l)
installed=$(cd "$prefix/share/retrig/migrations" && ls ./*.sql | wc -l)
[ "$expected" = "$installed" ] || fail "$installed migrations installed, $expected in the tree"
expected=$(cd "$src/sql/functions" && ls ./*.sql | wc -l)
functions=$(cd "$prefix/share/retrig/sql/functions" && ls ./*.sql | wc -l)
[ "$expected" = "$functions" ] || fail "$functions SQL function files installed, $expected in the tree"
# ... where the installed `retrig migrate` finds them (<migrations_dir>/../sql/functions): a new
# database of its own lists them all as pending.
db="rt_test_install_$$_${RANDOM}"
admin() { PGPASSWORD=retrig psql -X -q -h 127.0.0.1 -p 5433 -U retrig -d retrig "$@"; }
admin -c "CREATE DATABASE \"$db\"" || fail "cannot create database $db"
trap 'admin -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1; rm -rf "$prefix"' EXIT
status=$(env -u RETRIG_MIGRATIONS_DIR -u RETRIG_CONFIG \
    RETRIG_DATABASE_URL="postgresql://retrig:retrig@127.0.0.1:5433/$db" \
    "$prefix/bin/retrig" migrate --status) || fail "installed retrig migrate --status failed"
echo "$status" | grep -q "^functions: 0 applied, $functions pending" ||
    fail "installed retrig migrate does not find the installed SQL functions: $status"
[ -f "$prefix/share/doc/retrig/retrig.conf.example" ] || fail "no example configuration"
[ -f "$prefix/share/doc/retrig/docs/operations.md" ] || fail "no documentation"

# The installed binary finds the installed migrations; the build tree's finds the source tree's.
dir=$(env -u RETRIG_MIGRATIONS_DIR -u RETRIG_CONFIG "$prefix/bin/retrig" config |
    sed -n 's/^migrations_dir *= *//p')
[ "$dir" = "$(realpath "$prefix/share/retrig/migrations")" ] ||
    fail "installed retrig reads migrations from '$dir'"
dir=$(env -u RETRIG_MIGRATIONS_DIR -u RETRIG_CONFIG "$build/bin/retrig" config |
    sed -n 's/^migrations_dir *= *//p')
[ "$dir" = "$src/migrations" ] || fail "build-tree retrig reads migrations from '$dir'"

units=("$prefix"/lib/systemd/system/retrig-*)
[ "${#units[@]}" -ge 9 ] || fail "${#units[@]} systemd units installed"
if grep -h '^ExecStart=' "${units[@]}" | grep -v "^ExecStart=$prefix/bin/retrig"; then
    fail "an installed unit starts a binary outside $prefix/bin"
fi
# ... and their documentation is there.
for doc in $(grep -h '^Documentation=' "${units[@]}" | sed 's/^Documentation=//' | tr ' ' '\n' | sort -u); do
    [ -f "${doc#file://}" ] || fail "a unit's documentation $doc is not installed"
done
echo "install: binaries, ${installed} migrations, ${functions} SQL function files, ${#units[@]} units under one prefix"
