#!/usr/bin/env bash
# The repository's files whose code runs on the loop thread for one echoed
# line (ARCHITECTURE.md's "The path of one echoed line"), measured:
#
#   .ci/echo_path.sh [OUT]    # prints the files; writes them to OUT too
#
# Runs `examples/line_echo` under callgrind, built without optimization
# (nothing inlined but what says `inline(always)`, so every function that
# runs has instructions of its own, each with its line) and without debug
# assertions and overflow checks (so code that only a debug build runs,
# such as a check under `cfg(debug_assertions)`, is not counted: the path
# is a release build's), in a target directory of its own (about a minute
# the first time). With instrumentation off, a client connects, reads the
# greeting and echoes a first line (the connection warm); then, with it
# on, echoes `hi` and waits for the task to park again on its next read. `.ci/echo_path.py` maps the loop thread's instructions to
# the files their lines are in, and applies the rule for macros. Installs
# valgrind if it is missing. About 10 s once built.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-}"
. benches/lib.sh
need valgrind valgrind

CARGO_PROFILE_DEV_DEBUG_ASSERTIONS=false CARGO_PROFILE_DEV_OVERFLOW_CHECKS=false \
    cargo build --example line_echo --target-dir target/echo-path --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(free_port)

valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
    --callgrind-out-file="$work/callgrind.out" \
    target/echo-path/debug/examples/line_echo --port "$port" >/dev/null 2>"$work/valgrind.log" &
pid=$!
wait_for_port "$port"
python3 - "$port" "$pid" <<'EOF'
import socket, subprocess, sys, time

port, pid = int(sys.argv[1]), sys.argv[2]

def instr(state):
    subprocess.run(["callgrind_control", f"--instr={state}", pid], check=True, capture_output=True, timeout=30)

with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
    replies = s.makefile("rb")
    assert replies.readline() == b"Hello!\n"
    s.sendall(b"warm\n")
    assert replies.readline() == b"[echo] warm\n"
    time.sleep(0.5)  # the task parked on its next read
    instr("on")
    s.sendall(b"hi\n")
    assert replies.readline() == b"[echo] hi\n"
    time.sleep(0.5)  # and parked again
    instr("off")
EOF
kill -TERM "$pid"
wait "$pid" || true

files=$(python3 .ci/echo_path.py . "$work"/callgrind.out-*)
echo "$files"
if [ -n "$out" ]; then
    mkdir -p "$(dirname "$out")"
    echo "$files" >"$out"
fi
