#!/usr/bin/env bash
# PostgreSQL clients side by side (BENCHMARKS.md, "tokio-postgres on
# ioloop"): examples/pg_client on ioloop and its twin pg_client_tokio on
# tokio's current_thread runtime, the same code (examples/pg_client/
# work.rs), each with 16 connections running a prepared `SELECT 1` one at
# a time per connection for a fixed time, against one server
# (benches/postgres.sh) on CPU 0, the client on CPU 1; alternating,
# medians of --repeat runs. Reports queries per second and the client's
# CPU per query (getrusage: user + system). A third row measures the
# workaround for a library that needs tokio's reactor: the connections on
# a tokio runtime on a thread of their own, ioloop's tasks sending them
# each query over a channel (`pg_client --tokio-thread true`).
#
#   benches/pg_cost.sh                          # 3 repeats, 16 clients, 5 s, over TCP
#   benches/pg_cost.sh --repeat 5 --clients 16 --seconds 5 --unix
set -euo pipefail
cd "$(dirname "$0")/.."

repeat=3 clients=16 seconds=5 transport=tcp
while [ $# -gt 0 ]; do
    case "$1" in
        --repeat) repeat="$2"; shift 2 ;;
        --clients) clients="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        --unix) transport=unix; shift ;;
        *) echo "usage: $0 [--repeat N] [--clients N] [--seconds S] [--unix]" >&2; exit 2 ;;
    esac
done

cargo build --release -q -p testkit --example pg_client --example pg_client_tokio
dir=$(mktemp -d)
trap 'bash benches/postgres.sh stop "$dir"' EXIT
conn=$(PG_CPU=0 bash benches/postgres.sh start "$dir")
if [ "$transport" = tcp ]; then
    port=${conn##*port=}
    conn="host=127.0.0.1 port=${port%% *} user=postgres"
fi
echo "server: $conn (CPU 0); client on CPU 1; $clients clients, $seconds s, $repeat runs each" >&2
out=$(mktemp)
for r in $(seq 1 "$repeat"); do
    for run in "pg_client" "pg_client_tokio" "pg_client --tokio-thread true"; do
        read -r example extra <<<"$run"
        # shellcheck disable=SC2086
        line=$(taskset -c 1 "target/release/examples/$example" --conn "$conn" \
            --bench "$seconds" --clients "$clients" $extra | grep '^bench:')
        echo "run $r: $line" >&2
        echo "$line" >>"$out"
    done
done
python3 - "$out" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    runs.setdefault(f["runtime"], []).append((float(f["qps"]), float(f["cpu_us_per_query"])))
print("| client | queries per second (median) | client CPU per query, µs (median) | runs (qps / µs) |")
print("|---|---|---|---|")
for rt in ["ioloop", "tokio", "ioloop+tokio-thread"]:
    r = runs[rt]
    each = ", ".join(f"{q:.0f} / {c:.2f}" for q, c in r)
    print(f"| {rt} | {statistics.median(q for q, _ in r):.0f} | {statistics.median(c for _, c in r):.2f} | {each} |")
PY
rm -f "$out"
