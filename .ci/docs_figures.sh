#!/usr/bin/env bash
# The figures the docs quote (code lines, `unsafe` blocks, functions and
# impls, sizes of types, the files on an echoed line's path) against the
# code's, by tests/docs_figures/:
#
#   .ci/docs_figures.sh           # fails naming each doc, claim and right figure
#   .ci/docs_figures.sh --print   # and prints every figure the code gives
#
# The echo path is measured first (.ci/echo_path.sh, under callgrind), and
# handed to the test as IOLOOP_ECHO_PATH; the rest the test computes.
set -euo pipefail
cd "$(dirname "$0")/.."

capture=()
case "${1:-}" in
    --print) capture=(--nocapture) ;;
    "") ;;
    *) echo "usage: $0 [--print]" >&2; exit 2 ;;
esac

list="$PWD/target/docs-figures/echo-path.txt"
bash .ci/echo_path.sh "$list" >/dev/null
IOLOOP_ECHO_PATH="$list" cargo test -p testkit --test docs_figures -- "${capture[@]}"
