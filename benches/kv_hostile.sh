#!/usr/bin/env bash
# kv_server against hostile clients (issue 40), beside its tokio twin and
# redis-server 7: (a) the server's RSS before, while and after a client
# holds 9,000 subscriptions and leaves; (b) the time to answer a command of
# 300,000 one-byte arguments (DEL, then SUBSCRIBE) and (c) the slowest
# PING another client saw meanwhile.
#
#   benches/kv_hostile.sh              # all three servers, 3 runs each
#   benches/kv_hostile.sh kv_server    # one of kv_server, kv_server_tokio, redis
#
# Release build; server on core 0, clients (benches/kv_hostile.py) on
# core 1; installs redis-server (Debian's redis-server package) if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/lib.sh
need taskset util-linux
need redis-server redis-server

cargo build --release -p testkit --example kv_server --example kv_server_tokio --quiet

servers=("$@")
[ ${#servers[@]} -gt 0 ] || servers=(kv_server kv_server_tokio redis)
for server in "${servers[@]}"; do
    for run in 1 2 3; do
        for what in memory long; do
            port=$(free_port)
            if [ "$server" = redis ]; then
                taskset -c 0 redis-server --port "$port" --save '' --appendonly no \
                    --daemonize no >/dev/null 2>&1 &
            else
                taskset -c 0 "target/release/examples/$server" --port "$port" 2>/dev/null &
            fi
            pid=$!
            wait_for_port "$port"
            taskset -c 1 python3 benches/kv_hostile.py "$port" "$pid" "$what" |
                sed "s/^/$server run $run: /"
            kill -INT "$pid"; wait "$pid" || true
        done
    done
done
