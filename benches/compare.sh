#!/usr/bin/env bash
# The comparison against tokio in one command (see BENCHMARKS.md):
#
#   benches/compare.sh --quick      # under a minute
#   benches/compare.sh              # the full run, a few minutes
#
# Installs what the harness needs if it is missing (wrk, strace, taskset),
# builds every program in release mode, and runs examples/compare with the
# arguments given. Results: target/compare/report.md and ratios.svg.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "installing $2 ..." >&2
    $sudo apt-get install -y "$2" >/dev/null 2>&1 \
        || { $sudo apt-get update >/dev/null 2>&1 && $sudo apt-get install -y "$2" >/dev/null 2>&1; } \
        || echo "could not install $2; the harness skips what needs it" >&2
}
need wrk wrk
need strace strace
need taskset util-linux

# `hyper`: the hyper row's servers (hyper_hello, hyper_hello_tokio).
cargo build --release --examples --features hyper --quiet
exec target/release/examples/compare "$@"
