#!/usr/bin/env bash
# Starts, stops or reports a local three-node Citus cluster (a coordinator and two workers) for the
# Citus test tier (lib/idempotency/test/citus.test.ts) and `bench:claims` against a coordinator.
# It only uses a Citus that is already installed beside PostgreSQL (citus.so in `pg_config
# --pkglibdir`): install it from Citus's own packages (README, "Past one server: Citus"). It never
# fetches or builds Citus.
#
#   scripts/citus-cluster.sh start    # init (first time) and start the three nodes, register workers
#   scripts/citus-cluster.sh stop     # stop the three nodes (data kept)
#   scripts/citus-cluster.sh destroy  # stop and delete the data directories
#   scripts/citus-cluster.sh status
#
# Settings (environment): CITUS_PG_BIN (PostgreSQL binaries, default /usr/lib/postgresql/15/bin),
# CITUS_DIR (data directories, default /tmp/onceboard-citus), CITUS_PORT (the coordinator's port,
# default 9700; the workers take the next two), CITUS_OS_USER (the system user that owns and runs
# the nodes when this script runs as root; default postgres). It prints the CITUS_URL to use.
set -euo pipefail

PG_BIN="${CITUS_PG_BIN:-/usr/lib/postgresql/15/bin}"
DIR="${CITUS_DIR:-/tmp/onceboard-citus}"
PORT="${CITUS_PORT:-9700}"
OS_USER="${CITUS_OS_USER:-postgres}"
NODES=(coordinator worker1 worker2)

as_owner() {
  if [ "$(id -u)" = "0" ]; then runuser -u "$OS_USER" -- "$@"; else "$@"; fi
}

port_of() { echo $((PORT + $1)); }

psql_on() {
  local port="$1"
  shift
  as_owner "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres "$@"
}

start() {
  # Debian's layout: /usr/lib/postgresql/15/bin beside /usr/lib/postgresql/15/lib.
  if [ ! -f "$(dirname "$PG_BIN")/lib/citus.so" ]; then
    echo "citus.so is not installed in $(dirname "$PG_BIN")/lib: install Citus first (README, 'Past one server: Citus')." >&2
    exit 1
  fi
  mkdir -p "$DIR"
  if [ "$(id -u)" = "0" ]; then chown "$OS_USER" "$DIR"; fi
  local i
  for i in 0 1 2; do
    local data="$DIR/${NODES[$i]}" port
    port="$(port_of "$i")"
    if [ ! -f "$data/PG_VERSION" ]; then
      as_owner "$PG_BIN/initdb" -D "$data" -U postgres --auth=trust --no-sync >/dev/null
      cat >>"$data/postgresql.conf" <<CONF
# onceboard scripts/citus-cluster.sh
shared_preload_libraries = 'citus'
listen_addresses = '127.0.0.1'
port = $port
max_connections = 200
# Logical replication lets the default (online) shard move run.
wal_level = logical
max_worker_processes = 24
max_prepared_transactions = 200
fsync = on
CONF
    fi
    if ! as_owner "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      as_owner "$PG_BIN/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start >/dev/null
    fi
    psql_on "$port" -c "CREATE EXTENSION IF NOT EXISTS citus"
  done
  local coordinator
  coordinator="$(port_of 0)"
  psql_on "$coordinator" -c "SELECT citus_set_coordinator_host('127.0.0.1', $coordinator)" >/dev/null
  for i in 1 2; do
    psql_on "$coordinator" -c "SELECT citus_add_node('127.0.0.1', $(port_of "$i"))
      WHERE NOT EXISTS (SELECT 1 FROM pg_dist_node WHERE nodeport = $(port_of "$i"))" >/dev/null
  done
  status
}

stop() {
  local i
  for i in 2 1 0; do
    local data="$DIR/${NODES[$i]}"
    if [ -f "$data/PG_VERSION" ] && as_owner "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      as_owner "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    fi
  done
  echo "stopped the Citus cluster in $DIR"
}

status() {
  psql_on "$(port_of 0)" -c "SELECT nodename, nodeport, noderole, isactive FROM pg_dist_node ORDER BY nodeport"
  echo "CITUS_URL=postgresql://postgres@127.0.0.1:$(port_of 0)/postgres"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
destroy)
  stop
  rm -rf "$DIR"
  echo "deleted $DIR"
  ;;
status) status ;;
*)
  echo "usage: $0 start|stop|destroy|status" >&2
  exit 2
  ;;
esac
