#!/usr/bin/env bash
# SPDX-License-Identifier: MPL-2.0
# Local RabbitMQ, Redis and Postgres for development, tests and CI, without systemd.
#
#   deploy/local/services.sh start|stop|status|restart [rabbitmq|redis|postgres]...
#   deploy/local/services.sh rabbitmqctl|rabbitmq-diagnostics ARGS...   (CLI against our node)
#   deploy/local/services.sh psql ARGS...                               (as the cluster superuser)
#   deploy/local/services.sh cluster start|stop|status|urls
#   deploy/local/services.sh cluster stop-node N|start-node N|rabbitmqctl N ARGS...
#
# Everything listens on 127.0.0.1 only, on ports that do not clash with the system's own
# servers (which Debian starts on 5672/6379/5432 where an init system exists):
#   RabbitMQ  amqp://guest:guest@127.0.0.1:5673/   node retrig@localhost, distribution port 25673
#   Redis     redis://127.0.0.1:6380               no persistence
#   Postgres  postgresql://retrig:retrig@127.0.0.1:5433/retrig   (superuser role retrig)
# `cluster` runs a second RabbitMQ, a cluster of three nodes retrig-c1..3@localhost on
# 127.0.0.1:5691, 5692 and 5693 (RT_LOCAL_CLUSTER_PORT + 1..3, default 5690; distribution
# ports 25691-25693, one epmd on 24386 for the three), for tests of quorum queues and of a
# lost node; `cluster urls` prints the amqp_url that names the three. `cluster stop` stops
# the nodes and forgets the cluster; `stop-node N` stops one (gracefully, as a node going
# away), `start-node N` starts it again and it rejoins. `cluster start` with no node running
# discards whatever state an earlier cluster left (it may have been killed mid-write).
# State (data, logs, pid files) lives in ${RT_LOCAL_DIR:-/tmp/retrig-local}.
# `start` is idempotent (a quick no-op when everything already answers) and waits until each
# server really serves; on failure it prints the tail of that server's log and exits non-zero.
# As root, Postgres runs as the `postgres` system user (it refuses root); everything else runs as
# the invoking user. RT_SERVICES_TIMEOUT (seconds, default 60) bounds each start.
# RT_PG_OPTIONS adds server settings to a Postgres start (pg_ctl -o, for example
# "-c shared_buffers=2GB -c huge_pages=try"; scripts/bench --history-scale uses it); they last
# until the next start without them, and an already running server keeps its own (restart it).
# Postgres inherits the environment, GLIBC_TUNABLES included.
set -euo pipefail

STATE_DIR="${RT_LOCAL_DIR:-/tmp/retrig-local}"
TIMEOUT="${RT_SERVICES_TIMEOUT:-60}"
ALL_SERVICES=(rabbitmq redis postgres)

# The ports are fixed for everyone (common/config.c defaults point at them); the RT_LOCAL_*
# overrides exist only to test this script beside a running set.
RMQ_PORT="${RT_LOCAL_RABBITMQ_PORT:-5673}"
RMQ_DIST_PORT=$((RMQ_PORT + 20000))
RMQ_EPMD_PORT=$((RMQ_PORT + 18696)) # 24369 for 5673
RMQ_NODE="${RT_LOCAL_RABBITMQ_NODE:-retrig}@localhost"
REDIS_PORT="${RT_LOCAL_REDIS_PORT:-6380}"
PG_PORT="${RT_LOCAL_POSTGRES_PORT:-5433}"
PG_BIN="${RT_PG_BIN:-/usr/lib/postgresql/15/bin}"

RMQ_DIR="$STATE_DIR/rabbitmq"
REDIS_DIR="$STATE_DIR/redis"
PG_DIR="$STATE_DIR/postgres"
PG_DATA="$PG_DIR/data"
PG_RUN="$PG_DIR/run"
PG_LOG="$PG_DIR/postgres.log"

say() { printf '%s\n' "$*"; }
err() { printf 'services.sh: %s\n' "$*" >&2; }

die_with_log() {
    local what="$1" log="$2"
    err "$what"
    if [ -n "$log" ]; then
        local f
        for f in $log; do
            [ -f "$f" ] || continue
            err "---- last lines of $f ----"
            tail -n 40 "$f" >&2 || true
        done
    fi
    exit 1
}

# True when process $1 exists and is not a zombie (a container's PID 1 may never reap them).
pid_alive() {
    [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null || return 1
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat="${stat##*) }"
    [ "${stat:0:1}" != Z ]
}

# Prints the pid from pid file $1 when that process is alive and its command line matches $2
# (guards against stale pid files whose pid was reused after a reboot).
live_pid() {
    local pid
    pid=$(read_pid "$1")
    if pid_alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"; then
        echo "$pid"
    fi
    return 0
}

read_pid() { [ -f "$1" ] && head -n1 "$1" 2>/dev/null | tr -dc '0-9' || true; }

# Waits up to $2 seconds for process $1 to exit; SIGKILL after that.
wait_exit() {
    local pid="$1" secs="$2" i
    for ((i = 0; i < secs * 10; i++)); do
        pid_alive "$pid" || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.2
}

# Pids of processes $@ and of all their descendants (one per line).
proc_tree() {
    local table todo=("$@") pid child
    table=$(ps -eo pid=,ppid= 2>/dev/null) || table=""
    while ((${#todo[@]})); do
        pid=${todo[0]}
        todo=("${todo[@]:1}")
        [ -n "$pid" ] || continue
        echo "$pid"
        for child in $(awk -v p="$pid" '$2 == p { print $1 }' <<<"$table"); do todo+=("$child"); done
    done
}

# True while some socket listens on TCP port $1 (any address, IPv4 or IPv6; /proc/net/tcp*
# columns: local address "ADDR:PORT" in hex, state 0A = LISTEN).
port_listening() {
    local hex
    hex=$(printf ':%04X' "$1")
    awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 }
        END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1

# ------------------------------------------------------------------------------------------------
# RabbitMQ

rmq_env() {
    export HOME="$RMQ_DIR" # the Erlang cookie file is $HOME/.erlang.cookie
    export RABBITMQ_NODENAME="$RMQ_NODE"
    export RABBITMQ_USE_LONGNAME=false
    export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    export RABBITMQ_NODE_PORT="$RMQ_PORT"
    export RABBITMQ_DIST_PORT="$RMQ_DIST_PORT"
    export RABBITMQ_CONF_ENV_FILE="$RMQ_DIR/rabbitmq-env.conf"
    export RABBITMQ_CONFIG_FILE="$RMQ_DIR/rabbitmq.conf"
    export RABBITMQ_ADVANCED_CONFIG_FILE="$RMQ_DIR/advanced.config"
    export RABBITMQ_ENABLED_PLUGINS_FILE="$RMQ_DIR/enabled_plugins"
    export RABBITMQ_MNESIA_BASE="$RMQ_DIR/mnesia"
    export RABBITMQ_LOG_BASE="$RMQ_DIR/log"
    export RABBITMQ_PID_FILE="$RMQ_DIR/rabbit.pid"
    export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    export ERL_EPMD_PORT="$RMQ_EPMD_PORT"
    export ERL_EPMD_ADDRESS=127.0.0.1
    export ERL_CRASH_DUMP="$RMQ_DIR/log/erl_crash.dump"
    unset RABBITMQ_ENV_LOADED || true
}

rmq_prepare() {
    mkdir -p "$RMQ_DIR/mnesia" "$RMQ_DIR/log"
    chmod 700 "$RMQ_DIR"
    if [ ! -s "$RMQ_DIR/.erlang.cookie" ]; then
        (umask 077 && od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$RMQ_DIR/.erlang.cookie")
        chmod 400 "$RMQ_DIR/.erlang.cookie"
    fi
    : >"$RMQ_DIR/rabbitmq-env.conf" # keeps /etc/rabbitmq/rabbitmq-env.conf out
    cat >"$RMQ_DIR/rabbitmq.conf" <<EOF
# Generated by deploy/local/services.sh
listeners.tcp.default = 127.0.0.1:$RMQ_PORT
loopback_users.guest = true
default_user = guest
default_pass = guest
log.file.level = info
log.console = false
disk_free_limit.absolute = 50MB
EOF
    echo '[].' >"$RMQ_DIR/enabled_plugins"
    echo '[].' >"$RMQ_DIR/advanced.config"
}

# AMQP 0-9-1 handshake: send the protocol header, expect a Connection.Start method frame back
# (frame type 1, channel 0, class 10 method 10).
rmq_amqp_ok() {
    local out
    out=$(timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$RMQ_PORT && printf 'AMQP\\x00\\x00\\x09\\x01' >&3 && head -c 11 <&3 | od -An -tx1" 2>/dev/null) || return 1
    out=$(echo $out)
    [[ "$out" == "01 00 00 "*" 00 0a 00 0a" ]]
}

rmq_pid() { live_pid "$RMQ_DIR/server.pid" rabbit; }

rmq_running() { [ -n "$(rmq_pid)" ] && rmq_amqp_ok; }

rmq_ctl() {
    (
        rmq_env
        cd "$RMQ_DIR"
        /usr/lib/rabbitmq/bin/rabbitmqctl -n "$RMQ_NODE" "$@"
    )
}

rmq_start() {
    if rmq_running; then
        say "rabbitmq: already running (pid $(rmq_pid), amqp://127.0.0.1:$RMQ_PORT)"
        return 0
    fi
    if [ -n "$(rmq_pid)" ]; then
        # Alive but not answering: give a booting node the usual time before declaring failure.
        :
    else
        if rmq_amqp_ok; then
            die_with_log "rabbitmq: port $RMQ_PORT already answers AMQP but not from our node (pid file $RMQ_DIR/server.pid); stop that server first" ""
        fi
        [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] ||
            die_with_log "rabbitmq: /usr/lib/rabbitmq/bin/rabbitmq-server missing (run scripts/install-deps.sh)" ""
        rmq_prepare
        local startup="$RMQ_DIR/log/startup.log"
        : >"$startup"
        rm -f "$RMQ_DIR/server.pid"
        (
            exec 8>&- 9>&- # the state and cluster locks must not outlive this script
            rmq_env
            cd "$RMQ_DIR"
            exec setsid bash -c 'echo $$ >"$1"; exec /usr/lib/rabbitmq/bin/rabbitmq-server' _ \
                "$RMQ_DIR/server.pid" </dev/null >>"$startup" 2>&1
        ) &
        disown || true
    fi
    local deadline=$((SECONDS + TIMEOUT)) pid="" written=""
    while ((SECONDS < deadline)); do
        pid=$(rmq_pid)
        # The child writes server.pid just after the fork: read it once and call the server
        # gone only when the pid it wrote is dead. (Reading it twice raced with that write: an
        # empty or missing file, then a full one, looked like a server that had exited.)
        [ -n "$pid" ] || written=$(read_pid "$RMQ_DIR/server.pid")
        if [ -z "$pid" ] && [ -n "$written" ] && ! pid_alive "$written"; then
            die_with_log "rabbitmq: server exited during startup" \
                "$RMQ_DIR/log/startup.log $RMQ_DIR/log/$RMQ_NODE.log"
        fi
        if [ -n "$pid" ] && rmq_amqp_ok; then break; fi
        sleep 0.5
    done
    if ! rmq_running; then
        rmq_stop >/dev/null 2>&1 || true # a hung node would make every later start fail too
        die_with_log "rabbitmq: not accepting AMQP on 127.0.0.1:$RMQ_PORT after ${TIMEOUT}s" \
            "$RMQ_DIR/log/startup.log $RMQ_DIR/log/$RMQ_NODE.log"
    fi
    # The listener is up; make sure boot has completed and guest/guest authenticates.
    if ! rmq_ctl -q await_startup --timeout "$TIMEOUT" >/dev/null 2>"$RMQ_DIR/log/ctl.err" ||
        ! rmq_ctl -q authenticate_user guest guest >/dev/null 2>>"$RMQ_DIR/log/ctl.err"; then
        die_with_log "rabbitmq: node started but rabbitmqctl checks failed" \
            "$RMQ_DIR/log/ctl.err $RMQ_DIR/log/$RMQ_NODE.log"
    fi
    say "rabbitmq: started (pid $(rmq_pid), amqp://guest:guest@127.0.0.1:$RMQ_PORT/)"
}

# VMs of our node, found by their command line (-home is our state directory), including
# one whose pid files are gone (an earlier start that failed half-way).
rmq_beam_pids() {
    local f pid
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}
        pid=${pid%/cmdline}
        case "$(tr '\0' ' ' 2>/dev/null <"$f")" in
        *beam*" -home $RMQ_DIR "*) pid_alive "$pid" && echo "$pid" ;;
        esac
    done
    return 0
}

# The ports a node of ours holds: AMQP, Erlang distribution, our private epmd.
rmq_busy_ports() {
    local p busy=""
    local ports=("$RMQ_PORT" "$RMQ_DIST_PORT")
    [ "${RMQ_SHARED_EPMD:-0}" = 1 ] || ports+=("$RMQ_EPMD_PORT")
    for p in "${ports[@]}"; do
        port_listening "$p" && busy="$busy $p"
    done
    echo "${busy# }"
}

# Stops the node and returns only once the old node is completely gone: every process it ran
# (the wrapper, the VM, erl_child_setup, inet_gethost) has exited, our epmd is gone (so the
# node name is no longer registered) and ports $RMQ_PORT, $RMQ_DIST_PORT and $RMQ_EPMD_PORT
# are free. A `restart` that started the new node earlier saw it exit during startup
# (address in use, or the name still registered). Bounded by RT_SERVICES_TIMEOUT.
rmq_stop() {
    local pid beam tree p busy deadline
    pid=$(rmq_pid)
    beam=$(live_pid "$RMQ_DIR/rabbit.pid" beam)
    # shellcheck disable=SC2046 # word splitting of the pid lists is intended
    tree=$(proc_tree $pid $beam $(rmq_beam_pids) | sort -un)
    if [ -n "$tree" ]; then
        # The wrapper script forwards SIGTERM to the VM as a graceful stop and waits for it;
        # Erlang/OTP itself also turns SIGTERM into init:stop().
        [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null || true; } && wait_exit "$pid" 60
        for beam in $beam $(rmq_beam_pids); do
            pid_alive "$beam" && { kill -TERM "$beam" 2>/dev/null || true; } && wait_exit "$beam" 30
        done
        # Helpers (erl_child_setup, inet_gethost) go when the VM closes their pipes.
        for p in $tree; do pid_alive "$p" && wait_exit "$p" 10; done
        say "rabbitmq: stopped"
    else
        say "rabbitmq: not running"
    fi
    rm -f "$RMQ_DIR/server.pid" "$RMQ_DIR/rabbit.pid"
    # Our private epmd (port $RMQ_EPMD_PORT) is no longer needed; a new node must not register
    # with one that is on its way out. (A cluster node's epmd serves the other nodes too.)
    if [ "${RMQ_SHARED_EPMD:-0}" != 1 ] && command -v epmd >/dev/null 2>&1 &&
        port_listening "$RMQ_EPMD_PORT"; then
        ERL_EPMD_PORT="$RMQ_EPMD_PORT" epmd -kill >/dev/null 2>&1 || true
    fi
    deadline=$((SECONDS + TIMEOUT))
    while busy=$(rmq_busy_ports) && [ -n "$busy" ]; do
        if ((SECONDS >= deadline)); then
            err "rabbitmq: port(s) $busy still in use ${TIMEOUT}s after the stop"
            return 1
        fi
        sleep 0.1
    done
}

rmq_status() {
    if rmq_running; then
        say "rabbitmq: running (pid $(rmq_pid), amqp://guest:guest@127.0.0.1:$RMQ_PORT/, node $RMQ_NODE)"
    else
        say "rabbitmq: down"
        return 1
    fi
}

# ------------------------------------------------------------------------------------------------
# A three-node RabbitMQ cluster (services.sh cluster ...), beside the single node

CLUSTER_BASE="${RT_LOCAL_CLUSTER_PORT:-5690}"
CLUSTER_NODES=3
CLUSTER_DIR="$STATE_DIR/cluster"

# Points the rmq_* functions at cluster node $1.
cluster_node() {
    local n="$1"
    [[ "$n" =~ ^[1-3]$ ]] || {
        err "cluster: no node '$n' (1, 2 or 3)"
        exit 2
    }
    RMQ_PORT=$((CLUSTER_BASE + n))
    RMQ_DIST_PORT=$((RMQ_PORT + 20000))
    RMQ_EPMD_PORT=$((CLUSTER_BASE + 18696))
    RMQ_NODE="retrig-c$n@localhost"
    RMQ_DIR="$CLUSTER_DIR/node$n"
    RMQ_SHARED_EPMD=1
}

cluster_urls() {
    local n hosts=""
    for ((n = 1; n <= CLUSTER_NODES; n++)); do hosts="$hosts,127.0.0.1:$((CLUSTER_BASE + n))"; done
    echo "amqp://guest:guest@${hosts#,}/"
}

# Starts node $1 (the same Erlang cookie as the others) and, unless it is node 1 or already
# a member, joins it to node 1's cluster.
cluster_start_node() {
    cluster_node "$1"
    mkdir -p "$RMQ_DIR"
    chmod 700 "$RMQ_DIR"
    if [ ! -s "$CLUSTER_DIR/.erlang.cookie" ]; then
        (umask 077 && od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$CLUSTER_DIR/.erlang.cookie")
    fi
    if ! cmp -s "$CLUSTER_DIR/.erlang.cookie" "$RMQ_DIR/.erlang.cookie" 2>/dev/null; then
        rm -f "$RMQ_DIR/.erlang.cookie"
        cp "$CLUSTER_DIR/.erlang.cookie" "$RMQ_DIR/.erlang.cookie"
        chmod 400 "$RMQ_DIR/.erlang.cookie"
    fi
    rmq_start
    [ "$1" = 1 ] && return 0
    if ! rmq_ctl -q cluster_status 2>/dev/null | grep -q "retrig-c1@localhost"; then
        rmq_ctl -q stop_app >/dev/null &&
            rmq_ctl -q join_cluster "retrig-c1@localhost" >/dev/null &&
            rmq_ctl -q start_app >/dev/null ||
            die_with_log "cluster: node $1 could not join retrig-c1@localhost" \
                "$RMQ_DIR/log/$RMQ_NODE.log"
        say "cluster: node $1 joined retrig-c1@localhost"
    fi
}

cluster_main() {
    local what="${1:-}"
    shift || true
    mkdir -p "$CLUSTER_DIR"
    case "$what" in
    start)
        exec 8>"$CLUSTER_DIR/.lock"
        flock -w $((TIMEOUT * 4)) 8 || die_with_log "could not lock $CLUSTER_DIR/.lock" ""
        local n running=0
        for ((n = 1; n <= CLUSTER_NODES; n++)); do
            (cluster_node "$n" && [ -n "$(rmq_pid)$(rmq_beam_pids)" ]) && running=1
        done
        if [ "$running" = 0 ] && compgen -G "$CLUSTER_DIR/node*" >/dev/null; then
            # No node runs: what is left is the state of a cluster killed before its stop,
            # possibly half written. The cluster is disposable, so it starts afresh.
            find "$CLUSTER_DIR" -mindepth 1 -maxdepth 1 ! -name .lock -exec rm -rf {} +
            say "cluster: no node was running; the state left behind is discarded"
        fi
        for ((n = 1; n <= CLUSTER_NODES; n++)); do (cluster_start_node "$n"); done
        say "cluster: $(cluster_urls)"
        ;;
    stop)
        exec 8>"$CLUSTER_DIR/.lock"
        flock -w $((TIMEOUT * 4)) 8 || die_with_log "could not lock $CLUSTER_DIR/.lock" ""
        local n
        for ((n = CLUSTER_NODES; n >= 1; n--)); do (cluster_node "$n" && rmq_stop); done
        cluster_node 1
        if command -v epmd >/dev/null 2>&1 && port_listening "$RMQ_EPMD_PORT"; then
            ERL_EPMD_PORT="$RMQ_EPMD_PORT" epmd -kill >/dev/null 2>&1 || true
        fi
        rm -rf "$CLUSTER_DIR"
        say "cluster: stopped and forgotten"
        ;;
    stop-node)
        [ $# -eq 1 ] || usage
        (cluster_node "$1" && rmq_stop)
        ;;
    start-node)
        [ $# -eq 1 ] || usage
        (cluster_start_node "$1")
        ;;
    status)
        local n rc=0
        for ((n = 1; n <= CLUSTER_NODES; n++)); do
            (cluster_node "$n" && rmq_status) || rc=1
        done
        return $rc
        ;;
    urls) cluster_urls ;;
    rabbitmqctl)
        [ $# -ge 1 ] || usage
        cluster_node "$1"
        shift
        rmq_ctl "$@"
        ;;
    *) usage ;;
    esac
}

# ------------------------------------------------------------------------------------------------
# Redis

redis_pid() { live_pid "$REDIS_DIR/redis.pid" redis-server; }

redis_ping() { [ "$(timeout 5 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

redis_running() { [ -n "$(redis_pid)" ] && redis_ping; }

redis_start() {
    if redis_running; then
        say "redis: already running (pid $(redis_pid), redis://127.0.0.1:$REDIS_PORT)"
        return 0
    fi
    if [ -z "$(redis_pid)" ]; then
        if redis_ping; then
            die_with_log "redis: port $REDIS_PORT already answers but not from our server (pid file $REDIS_DIR/redis.pid); stop that server first" ""
        fi
        command -v redis-server >/dev/null ||
            die_with_log "redis: redis-server missing (run scripts/install-deps.sh)" ""
        mkdir -p "$REDIS_DIR"
        rm -f "$REDIS_DIR/redis.pid"
        : >>"$REDIS_DIR/redis.log"
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --protected-mode yes \
            --daemonize yes --pidfile "$REDIS_DIR/redis.pid" --dir "$REDIS_DIR" \
            --logfile "$REDIS_DIR/redis.log" --save '' --appendonly no </dev/null 9>&- >>"$REDIS_DIR/redis.log" 2>&1 ||
            die_with_log "redis: redis-server failed to start" "$REDIS_DIR/redis.log"
    fi
    local deadline=$((SECONDS + TIMEOUT))
    while ((SECONDS < deadline)); do
        redis_running && break
        sleep 0.1
    done
    if ! redis_running; then
        redis_stop >/dev/null 2>&1 || true
        die_with_log "redis: no PONG on 127.0.0.1:$REDIS_PORT after ${TIMEOUT}s" "$REDIS_DIR/redis.log"
    fi
    say "redis: started (pid $(redis_pid), redis://127.0.0.1:$REDIS_PORT)"
}

redis_stop() {
    local pid
    pid=$(redis_pid)
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null || true
        wait_exit "$pid" 30
        say "redis: stopped"
    else
        say "redis: not running"
    fi
    rm -f "$REDIS_DIR/redis.pid"
}

redis_status() {
    if redis_running; then
        say "redis: running (pid $(redis_pid), redis://127.0.0.1:$REDIS_PORT)"
    else
        say "redis: down"
        return 1
    fi
}

# ------------------------------------------------------------------------------------------------
# Postgres

if [ "$IS_ROOT" = 1 ]; then
    PG_USER=postgres
else
    PG_USER="$(id -un)"
fi

# Runs a command as the user that owns the cluster, from a directory that user can read.
as_pg() {
    if [ "$IS_ROOT" = 1 ]; then
        (cd "$PG_DIR" && runuser -u "$PG_USER" -- "$@")
    else
        (cd "$PG_DIR" && "$@")
    fi
}

pg_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 5 >/dev/null 2>&1; }

pg_pid() { live_pid "$PG_DATA/postmaster.pid" postgres; }

pg_running() { [ -n "$(pg_pid)" ] && pg_ready; }

pg_psql() {
    as_pg "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_RUN" -p "$PG_PORT" -U "$PG_USER" "$@"
}

pg_prepare() {
    [ -x "$PG_BIN/postgres" ] ||
        die_with_log "postgres: $PG_BIN/postgres missing (run scripts/install-deps.sh)" ""
    if [ "$IS_ROOT" = 1 ] && ! getent passwd postgres >/dev/null; then
        die_with_log "postgres: running as root needs the 'postgres' system user (package postgresql)" ""
    fi
    mkdir -p "$PG_DIR"
    if [ "$IS_ROOT" = 1 ]; then
        chown "$PG_USER:" "$PG_DIR"
        if ! runuser -u "$PG_USER" -- test -w "$PG_DIR"; then
            die_with_log "postgres: user $PG_USER cannot write $PG_DIR (is $STATE_DIR or a parent not world-traversable?)" ""
        fi
    fi
    chmod 755 "$PG_DIR"
    as_pg mkdir -p "$PG_RUN"
    if [ ! -f "$PG_DATA/PG_VERSION" ]; then
        as_pg rm -rf "$PG_DIR/data.new"
        if ! as_pg "$PG_BIN/initdb" -D "$PG_DIR/data.new" -U "$PG_USER" --encoding=UTF8 \
            --locale=C --auth-local=peer --auth-host=scram-sha-256 >"$PG_DIR/initdb.log" 2>&1; then
            die_with_log "postgres: initdb failed" "$PG_DIR/initdb.log"
        fi
        as_pg tee -a "$PG_DIR/data.new/postgresql.conf" >/dev/null <<EOF

# ---- deploy/local/services.sh: local test cluster ----
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_RUN'
max_connections = 200
password_encryption = 'scram-sha-256'
# Throwaway development/test data: durability is not needed, speed is.
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
        as_pg mv "$PG_DIR/data.new" "$PG_DATA"
    fi
}

pg_ensure_role() {
    local have
    have=$(pg_psql -d postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'retrig'") ||
        die_with_log "postgres: psql failed" "$PG_LOG"
    if [ "$have" != 1 ]; then
        pg_psql -d postgres -c "CREATE ROLE retrig LOGIN SUPERUSER PASSWORD 'retrig'" >/dev/null ||
            die_with_log "postgres: creating role retrig failed" "$PG_LOG"
    fi
    have=$(pg_psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'retrig'")
    if [ "$have" != 1 ]; then
        pg_psql -d postgres -c "CREATE DATABASE retrig OWNER retrig" >/dev/null ||
            die_with_log "postgres: creating database retrig failed" "$PG_LOG"
    fi
}

pg_start() {
    if pg_running; then
        say "postgres: already running (pid $(pg_pid), postgresql://retrig:retrig@127.0.0.1:$PG_PORT/retrig)"
        return 0
    fi
    pg_prepare
    if [ -z "$(pg_pid)" ]; then
        if pg_ready; then
            die_with_log "postgres: port $PG_PORT already answers but not from our cluster ($PG_DATA); stop that server first" ""
        fi
        : >"$PG_DIR/pg_ctl.log"
        local opts=()
        [ -n "${RT_PG_OPTIONS:-}" ] && opts=(-o "$RT_PG_OPTIONS")
        if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t "$TIMEOUT" "${opts[@]}" start \
            </dev/null >"$PG_DIR/pg_ctl.log" 2>&1 9>&-; then
            pg_stop >/dev/null 2>&1 || true
            die_with_log "postgres: failed to start within ${TIMEOUT}s" "$PG_DIR/pg_ctl.log $PG_LOG"
        fi
    fi
    local deadline=$((SECONDS + TIMEOUT))
    while ((SECONDS < deadline)); do
        pg_running && break
        sleep 0.2
    done
    pg_running || die_with_log "postgres: not ready on 127.0.0.1:$PG_PORT after ${TIMEOUT}s" "$PG_LOG"
    pg_ensure_role
    say "postgres: started (pid $(pg_pid), postgresql://retrig:retrig@127.0.0.1:$PG_PORT/retrig)"
}

pg_stop() {
    if [ -n "$(pg_pid)" ]; then
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null 2>&1 || {
            local pid
            pid=$(pg_pid)
            [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null
            [ -n "$pid" ] && wait_exit "$pid" 10
        }
        say "postgres: stopped"
    else
        say "postgres: not running"
    fi
}

pg_status() {
    if pg_running; then
        say "postgres: running (pid $(pg_pid), postgresql://retrig:retrig@127.0.0.1:$PG_PORT/retrig)"
    else
        say "postgres: down"
        return 1
    fi
}

# ------------------------------------------------------------------------------------------------

fn_prefix() {
    case "$1" in
    rabbitmq) echo rmq ;;
    redis) echo redis ;;
    postgres) echo pg ;;
    *)
        err "unknown service '$1' (expected: ${ALL_SERVICES[*]})"
        exit 2
        ;;
    esac
}

usage() {
    cat >&2 <<EOF
usage: $0 start|stop|status|restart [rabbitmq|redis|postgres]...
       $0 rabbitmqctl|rabbitmq-diagnostics ARGS...
       $0 psql ARGS...
       $0 cluster start|stop|status|urls|stop-node N|start-node N|rabbitmqctl N ARGS...
State directory: $STATE_DIR (set RT_LOCAL_DIR to change)
EOF
    exit 2
}

lock() {
    mkdir -p "$STATE_DIR"
    chmod 755 "$STATE_DIR" 2>/dev/null || true
    exec 9>"$STATE_DIR/.lock"
    flock -w $((TIMEOUT * 4)) 9 || die_with_log "could not lock $STATE_DIR/.lock" ""
}

[ $# -ge 1 ] || usage
action="$1"
shift

case "$action" in
rabbitmqctl | rabbitmq-diagnostics)
    rmq_env
    cd "$RMQ_DIR"
    exec "/usr/lib/rabbitmq/bin/$action" -n "$RMQ_NODE" "$@"
    ;;
psql)
    pg_psql "$@"
    exit $?
    ;;
cluster)
    cluster_main "$@"
    exit $?
    ;;
start | stop | status | restart) ;;
*) usage ;;
esac

services=("$@")
[ ${#services[@]} -gt 0 ] || services=("${ALL_SERVICES[@]}")
for s in "${services[@]}"; do fn_prefix "$s" >/dev/null; done

rc=0
case "$action" in
start)
    lock
    for s in "${services[@]}"; do "$(fn_prefix "$s")_start"; done
    ;;
stop)
    lock
    for s in "${services[@]}"; do "$(fn_prefix "$s")_stop"; done
    ;;
restart)
    lock
    for s in "${services[@]}"; do
        "$(fn_prefix "$s")_stop"
        "$(fn_prefix "$s")_start"
    done
    ;;
status)
    for s in "${services[@]}"; do "$(fn_prefix "$s")_status" || rc=1; done
    ;;
esac
exit $rc
