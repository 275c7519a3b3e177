#!/usr/bin/env bash
# The comparison against tokio in one command (see BENCHMARKS.md):
#
#   benches/compare.sh --quick      # about 2 minutes
#   benches/compare.sh              # the full run, a few minutes
#
# Installs what the harness needs if it is missing (wrk, strace, taskset),
# builds every program in release mode, and runs examples/compare with the
# arguments given. Results: target/compare/report.md and ratios.svg.
set -euo pipefail
cd "$(dirname "$0")/.."

. benches/lib.sh
# The harness skips what needs a tool it could not get.
for tool in "wrk wrk" "strace strace" "taskset util-linux" "redis-benchmark redis-tools"; do
    need $tool || echo "could not install ${tool#* }; the harness skips what needs it" >&2
done

# `hyper`: the hyper row's servers (hyper_hello, hyper_hello_tokio).
cargo build --release --workspace --examples --quiet
exec target/release/examples/compare "$@"
