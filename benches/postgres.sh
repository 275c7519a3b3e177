#!/usr/bin/env bash
# A throwaway PostgreSQL server for examples/pg_client, its tests
# (tests/servers/pg_client.rs, through testkit's `pg`) and its benchmark
# (benches/pg_cost.sh): Debian's `postgresql` package, installed if
# missing; a new cluster in DIR, listening on a Unix socket in DIR and on
# 127.0.0.1:PORT (a free port); trust authentication, no fsync. Nothing
# outside DIR is touched, and `stop` removes it.
#
#   benches/postgres.sh start DIR   # prints the connection settings, as
#                                   # `host=DIR port=PORT user=postgres`
#   benches/postgres.sh stop DIR    # a fast shutdown, then DIR removed
#   benches/postgres.sh kill DIR    # an immediate shutdown (every backend
#                                   # killed at once), DIR kept
#
# As root, the server runs as the package's `postgres` user (PostgreSQL
# refuses to run as root). With PG_CPU set (say 0), the server and its
# backends run on that CPU alone (a benchmark pins its client apart).
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

bin_dir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [[ -z $dir ]]; then
        need pg_ctlcluster postgresql
        dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    fi
    [[ -x $dir/initdb ]] || { echo "no PostgreSQL server: apt-get install postgresql" >&2; exit 1; }
    echo "$dir"
}

# as_owner CMD...: runs CMD as the data directory's owner.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

cmd=${1:?usage: benches/postgres.sh start|stop|kill DIR}
dir=${2:?usage: benches/postgres.sh start|stop|kill DIR}
bin=$(bin_dir)
case "$cmd" in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    port=$(free_port)
    # -w: returns once the server accepts connections.
    pin=()
    [[ -n ${PG_CPU:-} ]] && pin=(taskset -c "$PG_CPU")
    as_owner ${pin[@]+"${pin[@]}"} "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir -p $port -h 127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "host=$dir port=$port user=postgres"
    ;;
stop)
    if [[ -d $dir/data ]]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
kill)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
*)
    echo "usage: benches/postgres.sh start|stop|kill DIR" >&2
    exit 2
    ;;
esac
