#!/usr/bin/env bash
# What one HTTP/1.1 keep-alive request costs hyper 1.x on ioloop
# (examples/hyper_hello, through ioloop::compat::hyper) and on tokio's
# current_thread runtime (examples/hyper_hello_tokio), in numbers that do
# not depend on how noisy the machine is; echo_cost.sh's method, with wrk
# as the client:
#
#   benches/hyper_cost.sh                 # instructions and syscalls
#   benches/hyper_cost.sh --connections 100 --duration 5
#
# - user-space instructions per request: the server runs under valgrind's
#   callgrind while wrk sends `GET /` on 100 keep-alive connections: a 1 s
#   load warms it up uninstrumented, then every instruction the server runs
#   during a second load (its connects included) over every request that
#   load completed (before 2026-12-01 the count covered the whole run,
#   start-up included);
# - syscalls per request: the same load against the release server traced
#   with `strace -c -f`.
#
#   benches/hyper_cost.sh --top 10        # and the ten costliest functions
#
# Installs valgrind, strace, wrk and taskset if they are missing. Server on
# core 0, wrk on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."

conns=100
secs=5
top=0
while [ $# -gt 0 ]; do
    case "$1" in
        --connections) conns="$2"; shift 2 ;;
        --duration) secs="$2"; shift 2 ;;
        --top) top="$2"; shift 2 ;;
        *) echo "usage: $0 [--connections N] [--duration SECONDS] [--top N]" >&2; exit 2 ;;
    esac
done

. benches/lib.sh
need valgrind valgrind
need strace strace
need wrk wrk
need taskset util-linux

cargo build --release -p testkit --example hyper_hello --example hyper_hello_tokio --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The load on port $1 for $2 seconds (default: --duration); prints the
# number of requests completed (wrk's "N requests in").
load() {
    taskset -c 1 wrk -t1 -c"$conns" -d"${2:-$secs}s" "http://127.0.0.1:$1/" |
        awk '/requests in/ { print $1 }'
}

for name in hyper_hello hyper_hello_tokio; do
    server=target/release/examples/$name

    # 1. Instructions, under callgrind.
    port=$(free_port)
    taskset -c 0 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/$name.callgrind" \
        "$server" --port "$port" >/dev/null 2>"$work/$name.valgrind.log" &
    pid=$!
    wait_for_port "$port"
    load "$port" 1 >/dev/null
    callgrind_control --instr=on "$pid" >/dev/null 2>&1
    requests=$(load "$port")
    callgrind_control --instr=off "$pid" >/dev/null 2>&1
    # TERM, not INT: a background job of a script starts with SIGINT
    # ignored, and the tokio twin installs no handler of its own.
    kill -TERM "$pid"
    wait "$pid" || true
    # `totals`: with instrumentation switched on mid-run, `summary` says 0.
    instructions=$(sed -n 's/^totals: *//p' "$work/$name.callgrind" | head -n 1)
    echo "$name: instructions per request: $((instructions / requests))  ($instructions over $requests requests)"
    if [ "$top" -gt 0 ]; then
        callgrind_top "$work/$name.callgrind" "$top" "$requests"
    fi

    # 2. Syscalls, under strace.
    port=$(free_port)
    taskset -c 0 "$server" --port "$port" >/dev/null 2>&1 &
    pid=$!
    wait_for_port "$port"
    strace -c -f -q -o "$work/$name.strace" -p "$pid" &
    tracer=$!
    sleep 0.5 # let strace attach to every thread before the load starts
    requests=$(load "$port")
    kill -INT "$tracer"
    wait "$tracer" || true
    kill -TERM "$pid"
    wait "$pid" || true
    calls=$(awk '$NF == "total" { print $4 }' "$work/$name.strace")
    python3 -c "print(f'$name: syscalls per request: {$calls / $requests:.3f}  ($calls over $requests requests)')"
    awk 'NR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ { print "  " $NF, $4 }' "$work/$name.strace" | sort -k2 -n -r | head -n 4
done
