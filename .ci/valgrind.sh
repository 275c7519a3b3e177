#!/usr/bin/env bash
# The tests that exercise unsafe code, under valgrind memcheck (issue 7).
#
# The runtime's `unsafe` is in the task cell (runtime/src/event_loop/cell.rs):
# each spawned task allocated by hand and freed by its last reference
# (its own count, its wakers' vtable), its future pinned inside it, and
# its future or output reached without a lock by the one owner the state
# word names, so every test that spawns, wakes, aborts, panics in or shuts
# down tasks runs through it; and in JoinHandle::poll
# (runtime/src/task/join.rs), which takes the output through a pointer of
# its type, so every test that awaits a handle does; tests/rt/alloc.rs
# adds a GlobalAlloc of its own (the whole rt binary's allocator). The
# hyper adapter's two (compat/src/hyper/io.rs) let the kernel fill hyper's
# uninitialized read buffer, and the tokio adapter's two (compat/src/
# tokio.rs) tokio's ReadBuf; tests/compat drives them. Memcheck sees what
# the type system cannot: a read of freed or uninitialized memory, a
# double free, a task the reference counts never free. It also checks the
# dependencies (mio, parking_lot, slab, hyper) along the way.
#
# Exits non-zero on any memcheck error or failed test. Each binary's log is
# in target/valgrind/NAME.log. About 100 s on 2 cores once built (valgrind
# runs the code 20-50x slower, one thread at a time).
set -euo pipefail
cd "$(dirname "$0")/.."

# valgrind: usually on the machine already; installed if not. apt-get is
# needed only then, so a machine without it but with valgrind still runs.
if ! command -v valgrind >/dev/null; then
    if ! command -v apt-get >/dev/null; then
        echo "valgrind.sh: valgrind is not installed and apt-get is not available" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq valgrind >/dev/null
fi

# The subset: every integration test that spawns tasks and has no timing
# assertion, the unit tests of both crates, and the socket tests that run
# tasks end to end. Left out on purpose:
# - rt_idle: asserts an idle second costs under 50 ms of CPU; valgrind's
#   translation alone costs more.
# - rt's fib_offload module (skipped by name below): asserts echo latency
#   stays under 500 ms beside fib(38) on a pool thread; valgrind runs one
#   thread at a time, so the pool thread holds the loop off for seconds.
# - time, signal, the rest of net (tcp_emfile, tcp_sigpipe, ...), stress:
#   no unsafe path beyond the spawning the tests below already cover, real
#   sleeps that only cost time here, or child processes valgrind would not
#   follow.
# - prop: no tasks and no unsafe code; thousands of cases for nothing.
# - rt's spawn_blocking echo-during-a-computation test (skipped by name
#   below): like fib_offload, it measures latency beside a busy pool
#   thread, which valgrind's one-thread-at-a-time scheduling turns into
#   seconds; the rest of that module runs.
# - compat's tokio-rustls test (skipped by name below): memcheck reports
#   the records rustls seals with *ring*'s AES-GCM as uninitialised (their
#   origin, with --track-origins: a stack allocation in rustls's tls13.rs
#   `encrypter`, where *ring*'s assembly sets up the key), where they are
#   sent and where the peer checks their tag. futures-rustls's test
#   (servers' tls_echo, no tokio at all) gives the same 4 reports, so they
#   are rustls's and *ring*'s; `TokioIo`'s unsafe read runs under memcheck
#   in the rest of tokio_io.rs and tokio_libs.rs.
UNIT_PACKAGES=(ioloop-runtime ioloop-net)
# Each entry: a test binary (tests/NAME/main.rs or tests/NAME.rs), then the
# libtest filters that pick its tests (a test runs if its name contains
# one of them; none: every test). The filters are module paths, and no
# module of a binary has a name that ends another's, so each selects one
# module.
RUNS=(
    "rt"                    # spawn, shutdown, panic, alloc, spawn_blocking, wake,
                            # yield_now, block_on, handle, budget (fib_offload skipped)
    "rt_blocking_threads"
    "edge readiness::"
    "net tcp_accept::"
    "servers line_echo::"
    "io tcp:: read_cancel::"
    "compat"                # the hyper and tokio adapters' unsafe reads into
                            # uninitialized buffers (compat/src/hyper/io.rs,
                            # compat/src/tokio.rs): HTTP/1, HTTP/2, client,
                            # graceful stop, Unix; tokio's codecs, tokio-rustls
)
SKIP=(
    fib_offload::
    a_tcp_echo_answers_promptly_during_a_two_second_blocking_computation
    # Leaks on purpose: a runtime dropped away from its spawn_local tasks'
    # thread must not drop their futures, so memcheck sees them lost.
    a_runtime_dropped_away_from_its_local_tasks_leaks_their_futures
    # *ring*'s assembly, which memcheck misreads (see above).
    tokio_rustls_echoes_through_tls
)

test_args=()
declare -A filters
for run in "${RUNS[@]}"; do
    read -r name rest <<<"$run"
    test_args+=(--test "$name")
    filters[$name]=$rest
done
skip_args=()
for s in "${SKIP[@]}"; do
    skip_args+=(--skip "$s")
done

# Build in the profile `cargo test` uses, so CI reuses the compiled
# dependencies, and take the binaries' paths from cargo's JSON messages
# (the stable interface).
executables() {
    cargo test --no-run --message-format=json "$@" |
        grep -o '"executable":"[^"]*"' |
        cut -d'"' -f4
}
mapfile -t exes < <(
    executables "${UNIT_PACKAGES[@]/#/--package=}" --lib
    # The test binaries are testkit's (it turns on `hyper`, which the
    # compat binary needs).
    executables --package=testkit "${test_args[@]}"
)
if [ "${#exes[@]}" -ne $((${#UNIT_PACKAGES[@]} + ${#RUNS[@]})) ]; then
    echo "valgrind.sh: expected $((${#UNIT_PACKAGES[@]} + ${#RUNS[@]})) test binaries, cargo built ${#exes[@]}" >&2
    exit 1
fi

# Leak checking: only "definitely lost" blocks are errors. That is the
# leak a runtime can cause: a task whose reference count never reaches
# zero (a waker stored inside its own future, an Arc cycle), a Box
# forgotten on an error path; memcheck reports at least one block of any
# unreachable cycle as definitely lost. "Possibly lost" is the norm for
# Rust, not a leak: an Arc handed out as a pointer into the middle of its
# allocation (std's thread handles, Arc::into_raw) looks like one. "Still
# reachable" is statics and the thread-locals of threads alive at exit
# (the test harness, a blocking pool thread idling out). No suppressions
# are needed.
#
# One test thread: valgrind runs one thread at a time whatever the
# harness does, so parallel tests only make each test's share of time (and
# so its safety timeouts) depend on its neighbours. No backtraces: the
# panic tests panic on purpose, and symbolizing each panic under valgrind
# costs seconds.
mkdir -p target/valgrind
failed=()
for exe in "${exes[@]}"; do
    name=$(basename "$exe")
    name=${name%-*}
    log=target/valgrind/$name.log
    # The binary's filters (none for the unit tests), unquoted: one word each.
    # shellcheck disable=SC2086
    set -- ${filters[$name]:-}
    start=$SECONDS
    if RUST_BACKTRACE=0 valgrind --quiet --error-exitcode=99 \
        --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
        --num-callers=40 \
        "$exe" --test-threads=1 "${skip_args[@]}" "$@" \
        >"$log" 2>&1; then
        result=$(grep '^test result' "$log" | tail -n 1)
        echo "valgrind: $name: clean in $((SECONDS - start))s (${result#test result: })"
    else
        code=$?
        if [ "$code" -eq 99 ]; then
            why="memcheck errors"
        else
            why="exit code $code"
        fi
        echo "valgrind: $name: FAILED ($why) in $((SECONDS - start))s; the log:"
        cat "$log"
        failed+=("$name")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "valgrind: ${#failed[@]} of ${#exes[@]} binaries failed: ${failed[*]}" >&2
    exit 1
fi
echo "valgrind: all ${#exes[@]} binaries clean"
