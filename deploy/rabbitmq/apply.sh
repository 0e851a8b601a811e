#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# deploy/rabbitmq/apply.sh - declares retrig's exchanges, work, delay and dead-letter queues
# on a RabbitMQ broker from definitions.json, with exactly the arguments the workers declare
# (so a worker's own declare never fails with 406 PRECONDITION_FAILED).
#
#   deploy/rabbitmq/apply.sh [--vhost VHOST] [--http URL]
#
# --vhost  the virtual host to declare into (default: retrig, as in definitions.json); it is
#          created when missing.
# --http   use the management HTTP API at URL (https://user:pass@rabbitmq:15671) instead of
#          rabbitmqctl; the user needs the administrator or policymaker tag.
# Without --http, rabbitmqctl import_definitions runs on this host; RT_RABBITMQCTL names the
# command (default: rabbitmqctl; for the local services:
# RT_RABBITMQCTL="deploy/local/services.sh rabbitmqctl").
# The definitions hold no users, passwords or permissions: create the retrig user and grant
#   rabbitmqctl set_permissions -p VHOST retrig '^retrig\.' '^retrig(\..*)?$' '^retrig\.'
# Re-running is harmless: declaring what exists with the same arguments changes nothing.
# The work queues are classic queues because that is what the code declares (see
# definitions.json and README "Deploying"): changing a queue's type means deleting it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vhost=retrig
http=
while [ $# -gt 0 ]; do
    case "$1" in
    --vhost) vhost=$2; shift 2 ;;
    --http) http=$2; shift 2 ;;
    -h|--help) sed -n '3,20p' "$0"; exit 0 ;;
    *) echo "apply.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$here/definitions.json" "$vhost" "$tmp/definitions.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
vhost = sys.argv[2]
doc["vhosts"] = [{"name": vhost}]
for kind in ("exchanges", "queues", "bindings"):
    for item in doc[kind]:
        item["vhost"] = vhost
json.dump(doc, open(sys.argv[3], "w"), indent=2)
PY
if [ -n "$http" ]; then
    enc=$(/usr/bin/python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$vhost")
    curl -fsS -X PUT "$http/api/vhosts/$enc" >/dev/null
    /usr/bin/python3 - "$tmp/definitions.json" "$tmp/vhost.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
json.dump({k: doc[k] for k in ("exchanges", "queues", "bindings")}, open(sys.argv[2], "w"))
PY
    curl -fsS -X POST -H 'Content-Type: application/json' --data-binary "@$tmp/vhost.json" \
        "$http/api/definitions/$enc" >/dev/null
else
    read -r -a ctl <<<"${RT_RABBITMQCTL:-rabbitmqctl}"
    "${ctl[@]}" add_vhost "$vhost" >/dev/null 2>&1 || true
    "${ctl[@]}" import_definitions "$tmp/definitions.json"
fi
echo "rabbitmq definitions applied to vhost $vhost"
