#!/usr/bin/env bash
# Instructions and syscalls per echoed message, like for like: each ioloop
# echo server beside the raw mio loop doing the same work, in one run,
# alternating, medians of --repeat runs (BENCHMARKS.md, "Like for like").
#
#   benches/like_for_like.sh                  # 3 repeats, 100 connections, 5 s each
#   benches/like_for_like.sh --repeat 5 --connections 50
#
# The pairs (each measured by benches/echo_cost.sh, with the same load):
#
# - plain echo: `tcp_echo` and `mio_reference --protocol plain`, the
#   load generator's `raw` protocol (64-byte messages echoed as they are);
# - line echo: `line_echo` and `mio_reference --protocol line` (greeting,
#   `[echo] ` replies, the line limit and a 30 s idle timeout moved on by
#   every read), the `line` protocol; tokio's twin `line_echo_tokio` beside.
#
# Prints a Markdown table: each server's medians, and its instructions
# over those of the raw loop doing the same work.
set -euo pipefail
cd "$(dirname "$0")/.."

repeat=3
pass=()
while [ $# -gt 0 ]; do
    case "$1" in
        --repeat) repeat="$2"; shift 2 ;;
        --connections | --duration) pass+=("$1" "$2"); shift 2 ;;
        *) echo "usage: $0 [--repeat N] [--connections N] [--duration SECONDS]" >&2; exit 2 ;;
    esac
done

# name | work | echo_cost.sh arguments
runs=(
    "tcp_echo|plain|--server tcp_echo --protocol raw"
    "mio_reference --protocol plain|plain|--server mio_reference --protocol raw --server-args --protocol=plain"
    "line_echo|line|--server line_echo --protocol line"
    "mio_reference --protocol line|line|--server mio_reference --protocol line --server-args --protocol=line"
    "line_echo_tokio|line|--server line_echo_tokio --protocol line"
)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$repeat"); do
    for run in "${runs[@]}"; do
        IFS='|' read -r name work args <<<"$run"
        # shellcheck disable=SC2086
        text=$(benches/echo_cost.sh ${pass[@]+"${pass[@]}"} $args 2>&1)
        ins=$(sed -n 's/^instructions per echoed message: \([0-9]*\).*/\1/p' <<<"$text")
        sys=$(sed -n 's/^syscalls per echoed message: \([0-9.]*\).*/\1/p' <<<"$text")
        [ -n "$ins" ] && [ -n "$sys" ] || { echo "$name failed:"; echo "$text"; exit 1; } >&2
        echo "$name|$work|$ins|$sys" >>"$out"
        echo "run $r: $name: $ins instructions, $sys syscalls per message" >&2
    done
done
python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, work, ins, sys_ = line.strip().split("|")
    rows.setdefault((name, work), []).append((int(ins), float(sys_)))
floor = {work: statistics.median(i for i, _ in runs)
         for (name, work), runs in rows.items() if name.startswith("mio_reference")}
print("| server | work | instructions per message (median; all) | × the raw loop doing the same work | syscalls per message (median) |")
print("|---|---|---|---|---|")
for (name, work), runs in rows.items():
    ins = statistics.median(i for i, _ in runs)
    alls = ", ".join(f"{i:,}" for i, _ in runs)
    ratio = ins / floor[work]
    print(f"| `{name}` | {work} | {ins:,.0f} ({alls}) | {ratio:.2f} | {statistics.median(s for _, s in runs):.3f} |")
PY
