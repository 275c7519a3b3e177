#!/usr/bin/env bash
# The rare paths' coverage (issue 41): runs the simulation suite
# (tests/sim) with every run appending its counts to a file
# (IOLOOP_SIM_COVERAGE), then lists each rare path: in how many runs the
# seed enabled it, in how many it was taken, how often in all, and NEVER
# for a path no run took: what the simulation does not reach.
#
#   tests/sim/coverage.sh [SEEDS]        # the suite at SEEDS seeds (1000)
#   tests/sim/coverage.sh --tally FILE   # only the table, from a file
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = --tally ]; then
    lines="$2"
else
    lines="$PWD/target/sim-coverage.txt"
    mkdir -p target
    rm -f "$lines"
    # The suite's own output goes to stderr: stdout is the table. Each
    # seed once: the determinism mode's second run would count it twice.
    IOLOOP_SIM_DETERMINISM=0 IOLOOP_SIM_SEEDS="${1:-1000}" IOLOOP_SIM_COVERAGE="$lines" \
        cargo test -p testkit --test sim -q >&2
fi

awk '
{
    runs++
    for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == "seed") continue
        if (!(kv[1] in seen)) { seen[kv[1]] = 1; order[++n] = kv[1] }
        if (kv[2] == "-") continue
        enabled[kv[1]]++
        fired[kv[1]] += kv[2]
        if (kv[2] > 0) taken[kv[1]]++
    }
}
END {
    printf "%-20s %9s %9s %12s\n", "point", "enabled", "taken", "times fired"
    for (i = 1; i <= n; i++) {
        p = order[i]
        printf "%-20s %9d %9d %12d%s\n", p, enabled[p], taken[p], fired[p], taken[p] ? "" : "  NEVER"
    }
    printf "%d runs\n", runs
}' "$lines"
