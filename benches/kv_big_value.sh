#!/usr/bin/env bash
# A 100 MiB value through the key-value server, on ioloop and on its tokio
# twin: while one client GETs it (reading as fast as it can), another sends
# PING after PING; the slowest PING is how long the loop was kept from
# others, and the server's peak resident memory is what the value cost.
#
#   benches/kv_big_value.sh            # both servers, 3 runs each
#
# Server on core 0, clients (benches/kv_big_value.py) on core 1; needs
# python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/lib.sh
need taskset util-linux

cargo build --release -p testkit --example kv_server --example kv_server_tokio --quiet

for server in kv_server kv_server_tokio; do
    for run in 1 2 3; do
        port=$(free_port)
        taskset -c 0 "target/release/examples/$server" --port "$port" 2>/dev/null &
        pid=$!
        wait_for_port "$port"
        read -r slowest pings < <(taskset -c 1 python3 benches/kv_big_value.py "$port")
        peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
        kill -INT "$pid"; wait "$pid" || true
        echo "$server run $run: slowest PING ${slowest} ms over $pings PINGs during the GET; peak RSS $((peak / 1024)) MiB"
    done
done
