#!/usr/bin/env bash
# `line_echo --loops N`: what one loop per core costs and how the kernel
# spreads connections, measured the only honest way a 2-core machine
# allows (see BENCHMARKS.md, "One loop per core"):
#
#   benches/loops.sh                          # --loops 1 and 2, 3 runs each
#   benches/loops.sh --reps 5 --duration 5 --connections 100
#   benches/loops.sh --loops 1 --server-args "--slow-poll-ms 0"   # detector off
#
# The server, all its loops, runs on core 0 and the load generator on
# core 1, the core it needs (it saturates a core before the server does).
# Runs alternate between the loop counts; each figure is the median.
# Printed per loop count: messages per second, the server's CPU time per
# echoed message (utime + stime from /proc, over the measured run), and
# how many connections each loop accepted.
#
# What this cannot show on 2 cores: throughput growing with the loops.
# That needs a core per loop plus the load generator's own; on such a
# machine: benches/loops.sh --server-cpus 0-3 --client-cpus 4-5 --loops "1 2 4"
set -euo pipefail
cd "$(dirname "$0")/.."

reps=3
secs=5
conns=100
server_cpus=0
client_cpus=1
loops_list="1 2"
server_args=""
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps="$2"; shift 2 ;;
        --duration) secs="$2"; shift 2 ;;
        --connections) conns="$2"; shift 2 ;;
        --server-cpus) server_cpus="$2"; shift 2 ;;
        --client-cpus) client_cpus="$2"; shift 2 ;;
        --loops) loops_list="$2"; shift 2 ;;
        --server-args) server_args="$2"; shift 2 ;;
        *) echo "usage: $0 [--reps N] [--duration SECONDS] [--connections N] [--server-cpus 0] [--client-cpus 1] [--loops '1 2'] [--server-args '...']" >&2; exit 2 ;;
    esac
done

. benches/lib.sh
need taskset util-linux

cargo build --release --workspace --example line_echo --example loadgen --quiet
server=target/release/examples/line_echo
loadgen=target/release/examples/loadgen
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ticks=$(getconf CLK_TCK)

# utime + stime of a process, all its threads, in clock ticks.
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# One run: prints "loops msgs_per_sec cpu_us_per_msg conns_loop0 conns_loop1 ...".
run() {
    local loops=$1 port pid before after json
    port=$(free_port)
    taskset -c "$server_cpus" "$server" --port "$port" --loops "$loops" $server_args 2>"$work/server.log" >/dev/null &
    pid=$!
    for _ in $(seq 1 200); do
        grep -q "listening on" "$work/server.log" 2>/dev/null && break
        sleep 0.05
    done
    before=$(cpu_ticks "$pid")
    json=$(taskset -c "$client_cpus" "$loadgen" --addr "127.0.0.1:$port" --protocol line \
        --connections "$conns" --duration "$secs" --warmup 0 --json 2>/dev/null)
    after=$(cpu_ticks "$pid")
    kill -INT "$pid"
    wait "$pid" || true
    python3 - "$loops" "$before" "$after" "$ticks" "$json" "$work/server.log" <<'EOF'
import json, re, sys
loops, before, after, hz = map(int, sys.argv[1:5])
r = json.loads(sys.argv[5])
per_loop = [0] * loops
for line in open(sys.argv[6]):
    m = re.match(r"loop (\d+): connected", line)
    if m:
        per_loop[int(m.group(1))] += 1
    elif loops == 1 and line.startswith("connected:"):
        per_loop[0] += 1
cpu_us = (after - before) / hz * 1e6 / max(r["messages"], 1)
print(loops, round(r["msgs_per_sec"]), f"{cpu_us:.2f}", *per_loop)
EOF
}

for _ in $(seq 1 "$reps"); do
    for loops in $loops_list; do
        run "$loops"
    done
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    f = line.split()
    runs.setdefault(int(f[0]), []).append(f[1:])
print("loops  msgs/s (median)  server CPU us/msg (median)  connections per loop (each run)")
for loops, rs in sorted(runs.items()):
    rate = statistics.median(float(r[0]) for r in rs)
    cpu = statistics.median(float(r[1]) for r in rs)
    spread = "  ".join("/".join(r[2:]) for r in rs)
    print(f"{loops:5}  {rate:15.0f}  {cpu:26.2f}  {spread}")
'
