#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# Installs every Debian 12 package retrig needs to build, test and run locally.
# Idempotent and fast: asks dpkg first and only runs apt-get (update + install) when something is
# missing. Works as root, or through sudo otherwise. The server packages may start the system's
# own RabbitMQ/Redis/Postgres on their default ports where an init system exists; ours
# (deploy/local/services.sh) use other ports, so those are left alone.
set -euo pipefail

PACKAGES=(
    build-essential cmake pkg-config git ca-certificates
    clang libclang-rt-14-dev clang-format
    librabbitmq-dev libhiredis-dev libcurl4-openssl-dev libjansson-dev libpq-dev libssl-dev
    libcmocka-dev libmicrohttpd-dev libxml2-dev libzip-dev
    rabbitmq-server redis-server postgresql postgresql-client postgresql-15-partman
    python3 python3-jsonschema python3-yaml
    valgrind procps iproute2 netcat-openbsd curl openssl
    chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#PACKAGES[@]} packages already installed"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=()
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
        echo "install-deps: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2
        exit 1
    }
    SUDO=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold
    -o Dpkg::Use-Pty=0)
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${apt_opts[@]}" \
    "${missing[@]}" </dev/null

# Check the result: a package apt could not configure (e.g. a server whose post-install start
# failed) must not pass silently.
still=()
for p in "${missing[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || still+=("$p")
done
if [ ${#still[@]} -gt 0 ]; then
    echo "install-deps: still not installed: ${still[*]}" >&2
    exit 1
fi
echo "install-deps: done"
