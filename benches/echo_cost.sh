#!/usr/bin/env bash
# What one echoed message costs line_echo, in numbers that do not depend on
# how noisy the machine is (see BENCHMARKS.md):
#
#   benches/echo_cost.sh                 # instructions and syscalls
#   benches/echo_cost.sh --connections 100 --duration 5
#   benches/echo_cost.sh --top 10        # and the ten costliest functions
#   benches/echo_cost.sh --server-args "--slow-poll-ms 0"   # detector off
#   benches/echo_cost.sh --server mio_reference               # the raw mio loop
#   benches/echo_cost.sh --server line_echo_tokio             # tokio's twin
#   benches/echo_cost.sh --server line_echo_callbacks         # the callback layer
#   benches/echo_cost.sh --server tcp_echo --protocol raw      # a plain echo
#
# - user-space instructions per echoed message: the server runs under
#   valgrind's callgrind, the load generator sends 64-byte lines on 100
#   connections; a first load warms the server up (its tables and buffers
#   grown) uninstrumented, then a second load is measured:
#   every instruction the server ran during it (the connects and greetings
#   of its 100 connections included) over every message it echoed. Before
#   2026-12-01 the figure counted the whole run, start-up included, which
#   made it depend on how many messages a run managed;
# - syscalls per echoed message: the same load against the release server
#   traced with `strace -c -f`.
#
# Installs valgrind, strace and taskset if they are missing. Server on
# core 0, load generator on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."

conns=100
secs=5
top=0
server_args=""
server_name=line_echo
protocol=line
while [ $# -gt 0 ]; do
    case "$1" in
        --connections) conns="$2"; shift 2 ;;
        --duration) secs="$2"; shift 2 ;;
        --top) top="$2"; shift 2 ;;
        --server-args) server_args="$2"; shift 2 ;;
        --server) server_name="$2"; shift 2 ;;
        --protocol) protocol="$2"; shift 2 ;;
        *) echo "usage: $0 [--connections N] [--duration SECONDS] [--top N] [--server line_echo|line_echo_tokio|line_echo_callbacks|mio_reference|tcp_echo] [--protocol line|raw] [--server-args '...']" >&2; exit 2 ;;
    esac
done

. benches/lib.sh
need valgrind valgrind
need strace strace
need taskset util-linux

cargo build --release --workspace --example "$server_name" --example loadgen --quiet
server=target/release/examples/$server_name
loadgen=target/release/examples/loadgen
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

port=$(free_port)

# The load, for $1 seconds (default: --duration); prints the number of
# messages echoed.
load() {
    taskset -c 1 "$loadgen" --addr "127.0.0.1:$port" --protocol "$protocol" \
        --connections "$conns" --duration "${1:-$secs}" --warmup 0 --json \
        2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["messages"])'
}

# 1. Instructions, under callgrind.
# Servers are stopped with SIGTERM: a background job of a script ignores
# SIGINT, and a server that sets no handler of its own (the raw loop) would
# never see it.
# Instrumentation starts off, is switched on once the warm-up load is done
# and off again after the measured one.
taskset -c 0 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" \
    "$server" --port "$port" $server_args >/dev/null 2>"$work/valgrind.log" &
pid=$!
wait_for_port "$port"
load 1 >/dev/null
callgrind_control --instr=on "$pid" >/dev/null 2>&1
messages=$(load)
callgrind_control --instr=off "$pid" >/dev/null 2>&1
kill -TERM "$pid"
wait "$pid" || true
measured="$work/callgrind.out"
# `totals`, not `summary`: with instrumentation switched on mid-run the
# summary line says 0.
instructions=$(sed -n 's/^totals: *//p' "$measured" | head -n 1)
echo "instructions per echoed message: $((instructions / messages))  ($instructions over $messages messages)"
if [ "$top" -gt 0 ]; then
    # Each function's own instructions (callees excluded), per message.
    echo "the $top costliest functions, instructions per echoed message (self):"
    callgrind_top "$measured" "$top" "$messages"
fi

# 2. Syscalls, under strace.
port=$(free_port)
taskset -c 0 "$server" --port "$port" $server_args >/dev/null 2>&1 &
pid=$!
wait_for_port "$port"
strace -c -f -q -o "$work/strace.txt" -p "$pid" &
tracer=$!
sleep 0.5 # let strace attach to every thread before the load starts
messages=$(load)
kill -INT "$tracer"
wait "$tracer" || true
kill -TERM "$pid"
wait "$pid" || true
calls=$(awk '$NF == "total" { print $4 }' "$work/strace.txt")
python3 -c "print(f'syscalls per echoed message: {$calls / $messages:.3f}  ($calls over $messages messages)')"
awk 'NR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ { print "  " $NF, $4 }' "$work/strace.txt" | sort -k2 -n -r | head -n 4
