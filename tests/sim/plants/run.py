#!/usr/bin/env python3
"""Plants bugs in a scratch copy of ioloop, one at a time, and reports which
the simulation suite (`cargo test -p testkit --test sim`) catches.

A plant is a small TOML file in this directory (`*.toml`): its name, its
kind, the library file, and one or more edits, each an exact snippet of
that file and its replacement. A snippet must occur exactly once in the
file, so a plant survives code moving around within it, where a patch's
line numbers would not; a snippet no longer found is reported as such
(the plant needs updating), never silently skipped.

For each plant the runner:

1. writes the repository's tracked files into a scratch tree
   (target/plants/tree, only files whose contents differ, so mtimes and the
   scratch's own target dir, target/plants/target, make each plant an
   incremental build), then applies the plant's edits there; the library
   files of the repository itself are never touched;
2. builds the `sim` test binary there and runs its tests one process each,
   fastest (by the unplanted run) first, with IOLOOP_SIM_SEEDS seeds,
   stopping at the first failure; a test that runs past its bound (a
   multiple of its unplanted time, at least --min-bound seconds) is killed
   and reported as a hang with that bound, as is a plant whose tests
   together run past --plant-bound;
3. replays the failing seed in a fresh process (IOLOOP_SIM_SEED=<seed>,
   that test alone) and compares the failure's text with the first;
4. with --real, runs the real-socket test the plant names (`real`), to
   show the bug is one the ordinary suite sees too.

Before the plants, the unplanted tree runs the same way: every test must
pass (else the runner stops: a plant caught by a test that fails anyway
proves nothing), and its times set the bounds and the order.

The results go to stdout and, with --results, to a Markdown file.

A plant's file may name its real-socket test: `real = { test = "io",
filter = "line_limit::" }` (a testkit test binary and a libtest filter).

Usage: tests/sim/plants/run.py [--seeds N] [--only a,b] [--results FILE]
       [--real] [--min-bound S] [--bound-factor F] [--plant-bound S]
       [--expect a,b]   (exit 1 unless each is caught and its seed replays)
       tests/sim/plants/run.py --check   (every plant applies; no build)
"""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SCRATCH = os.path.join(ROOT, "target", "plants")
TREE = os.path.join(SCRATCH, "tree")
TARGET = os.path.join(SCRATCH, "target")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --- plants -----------------------------------------------------------------

def load_plants(only):
    plants = []
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".toml"):
            continue
        with open(os.path.join(HERE, name), "rb") as f:
            plant = tomllib.load(f)
        for key in ("name", "kind", "file", "what", "edit"):
            if key not in plant:
                sys.exit(f"{name}: no `{key}`")
        if plant["name"] != name[: -len(".toml")]:
            sys.exit(f"{name}: its name is {plant['name']!r}, not the file's")
        plants.append(plant)
    if only:
        wanted = set(only.split(","))
        unknown = wanted - {p["name"] for p in plants}
        if unknown:
            sys.exit(f"no plant named {', '.join(sorted(unknown))}")
        plants = [p for p in plants if p["name"] in wanted]
    return plants


def planted_text(plant, text):
    """`text` with the plant's edits, or an error saying which snippet is
    not found exactly once."""
    for i, edit in enumerate(plant["edit"]):
        count = text.count(edit["find"])
        if count != 1:
            where = "not found" if count == 0 else f"found {count} times"
            return None, f"edit {i + 1}'s snippet {where} in {plant['file']}"
        text = text.replace(edit["find"], edit["replace"])
    return text, None


# --- the scratch tree -----------------------------------------------------

def sync_tree():
    """Makes the scratch tree hold the repository's tracked files (as they
    are in the working tree), writing only those that differ."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for path in filter(None, out.split("\0")):
        src = os.path.join(ROOT, path)
        if not os.path.isfile(src):
            continue
        write_if_changed(os.path.join(TREE, path), read(src))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write_if_changed(path, data):
    if os.path.exists(path) and read(path) == data:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def build(test):
    """Builds testkit's test binary `test` in the scratch tree; returns its
    path, or None and the compiler's complaint."""
    cmd = [
        "cargo", "test", "-p", "testkit", "--test", test, "--no-run",
        "--message-format=json-render-diagnostics", "--target-dir", TARGET,
    ]
    done = subprocess.run(cmd, cwd=TREE, capture_output=True, text=True)
    exe = None
    for line in done.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == test:
            exe = msg["executable"]
    if done.returncode != 0 or exe is None:
        return None, done.stderr[-2000:]
    return exe, None


# --- running tests --------------------------------------------------------

def run_test(exe, test, env, bound):
    """Runs one test in a fresh process; returns (status, seconds, output),
    status "pass", "fail" or "hang" (killed at `bound` seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [exe, "--exact", test, "--test-threads", "1"],
        cwd=os.path.join(TREE, "testkit"), env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return "hang", time.monotonic() - start, out
    took = time.monotonic() - start
    return ("pass" if proc.returncode == 0 else "fail"), took, out


def list_tests(exe):
    out = subprocess.run(
        [exe, "--list", "--format", "terse"], capture_output=True, text=True,
        check=True, cwd=os.path.join(TREE, "testkit"),
    ).stdout
    return [line[: -len(": test")] for line in out.splitlines() if line.endswith(": test")]


def failure_text(output, test):
    """The failing test's own output (its panic), without the lines that
    differ between runs of the same failure."""
    m = re.search(
        r"^---- " + re.escape(test) + r" stdout ----\n(.*?)(?=^failures:$|^---- )",
        output, re.S | re.M,
    )
    text = m.group(1) if m else output
    keep = [line for line in text.strip().splitlines() if not line.startswith("note: ")]
    # The panicking thread's OS id differs from process to process.
    return re.sub(r"^(thread '[^']*') \(\d+\)", r"\1", "\n".join(keep), flags=re.M)


def seed_of(text):
    m = re.search(r"simulation with seed (\d+) failed", text)
    return int(m.group(1)) if m else None


def first_line(text, test):
    """The failure in a line, for the table: the sim's `failed: ...` line,
    else the first line of the panic message."""
    m = re.search(r"simulation with seed \d+ failed: (.*)", text)
    if m:
        return m.group(1)
    lines = [line for line in text.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("thread ") and "panicked" in line and i + 1 < len(lines):
            return lines[i + 1]
    return lines[0] if lines else "(no output)"


def env_with(seeds, seed=None):
    env = dict(os.environ)
    env["IOLOOP_SIM_SEEDS"] = str(seeds)
    env.pop("IOLOOP_SIM_SEED", None)
    if seed is not None:
        env["IOLOOP_SIM_SEED"] = str(seed)
    env["RUST_BACKTRACE"] = "0"
    return env


# --- the runner -----------------------------------------------------------

def baseline(args):
    log("building the unplanted scratch tree")
    sync_tree()
    exe, err = build("sim")
    if exe is None:
        sys.exit(f"the unplanted tree does not build:\n{err}")
    tests = list_tests(exe)
    times = {}
    for test in tests:
        status, took, out = run_test(exe, test, env_with(args.seeds), args.plant_bound)
        if status != "pass":
            sys.exit(f"unplanted, {test} does not pass ({status}):\n{out[-3000:]}")
        times[test] = took
        log(f"  unplanted {test}: {took:.2f} s")
    order = sorted(tests, key=lambda t: (times[t], t))
    return order, times


def run_plant(plant, order, times, args):
    result = {"name": plant["name"], "kind": plant["kind"], "file": plant["file"]}
    sync_tree()
    path = os.path.join(TREE, plant["file"])
    text, err = planted_text(plant, read(path).decode())
    if err:
        result.update(status="error", detail=err)
        return result
    write_if_changed(path, text.encode())
    start = time.monotonic()
    exe, err = build("sim")
    result["build"] = time.monotonic() - start
    if exe is None:
        result.update(status="error", detail="does not compile: " + err.strip().splitlines()[-1])
        return result
    spent = 0.0
    for test in order:
        bound = max(args.min_bound, args.bound_factor * times[test])
        left = args.plant_bound - spent
        status, took, out = run_test(exe, test, env_with(args.seeds), min(bound, max(left, 1)))
        spent += took
        if status == "pass":
            if spent >= args.plant_bound:
                result.update(status="hang", test=test, time=spent,
                              detail=f"the plant's tests ran past its bound of {args.plant_bound:.0f} s")
                return result
            continue
        result.update(test=test, time=spent)
        if status == "hang":
            result.update(status="hang", bound=min(bound, left),
                          detail=f"killed after {min(bound, left):.0f} s (unplanted: {times[test]:.1f} s)")
            return result
        text = failure_text(out, test)
        seed = seed_of(text)
        result.update(status="caught", seed=seed, detail=first_line(text, test), text=text)
        if seed is None:
            result["replayed"] = "no seed"
        else:
            again_status, _, again = run_test(
                exe, test, env_with(args.seeds, seed), max(args.min_bound, 10 * took))
            same = again_status == "fail" and failure_text(again, test) == text
            result["replayed"] = "yes" if same else f"no ({again_status})"
            if not same:
                result["replay_text"] = failure_text(again, test)
        return result
    result.update(status="missed", time=spent)
    return result


def run_real(plant):
    """Runs the real-socket test a plant names, planted; (status, detail)."""
    real = plant.get("real")
    if not real:
        return "none", ""
    exe, err = build(real["test"])
    if exe is None:
        return "error", err
    cmd = [exe, real["filter"], "--test-threads", "2"]
    try:
        done = subprocess.run(cmd, cwd=os.path.join(TREE, "testkit"), capture_output=True,
                              text=True, timeout=real.get("bound", 300), start_new_session=True)
    except subprocess.TimeoutExpired:
        return "hang", ""
    m = re.search(r"test result: \w+\. (\d+) passed; (\d+) failed", done.stdout)
    if m and int(m.group(1)) + int(m.group(2)) == 0:
        return "error", f"no test matches {real['filter']!r}"
    failed = re.findall(r"^test (\S+) \.\.\. FAILED", done.stdout, re.M)
    return ("fail" if done.returncode != 0 else "pass"), ", ".join(failed)


def table(results, args, commit, took):
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    lines = [
        f"Plants run {date} on {commit}, IOLOOP_SIM_SEEDS={args.seeds}, "
        f"{took / 60:.1f} min in all: `{' '.join(['tests/sim/plants/run.py'] + sys.argv[1:])}`",
        "",
        "| plant | kind | caught by | seed | replayed | time | real-socket test |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r["status"] == "caught":
            by = f"`{r['test']}`: {r['detail']}"
            seed = "–" if r["seed"] is None else str(r["seed"])
            replayed = r["replayed"]
        elif r["status"] == "hang":
            by = f"hang in `{r.get('test', '?')}`: {r['detail']}"
            seed, replayed = "–", "–"
        elif r["status"] == "missed":
            by, seed, replayed = "**missed**", "–", "–"
        else:
            by, seed, replayed = f"error: {r['detail']}", "–", "–"
        when = f"{r['time']:.2f} s" if "time" in r else "–"
        real = r.get("real", "not run")
        by = by.replace("|", "\\|")
        lines.append(f"| {r['name']} | {r['kind']} | {by} | {seed} | {replayed} | {when} | {real} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--only", help="plants to run, by name, comma-separated")
    parser.add_argument("--results", help="write the table to this Markdown file")
    parser.add_argument("--real", action="store_true", help="run each plant's real-socket test too")
    parser.add_argument("--min-bound", type=float, default=30.0,
                        help="a test's bound in seconds is at least this")
    parser.add_argument("--bound-factor", type=float, default=5.0,
                        help="a test's bound is this times its unplanted time")
    parser.add_argument("--plant-bound", type=float, default=600.0,
                        help="a plant's tests together run at most this many seconds")
    parser.add_argument("--check", action="store_true",
                        help="only check that every plant applies to the working tree's files")
    parser.add_argument("--expect", help="plants that must be caught (comma-separated): "
                        "exit 1 if one is not, for CI")
    args = parser.parse_args()
    if shutil.which("cargo") is None:
        sys.exit("cargo not found")
    plants = load_plants(args.only)
    if args.check:
        bad = []
        for plant in plants:
            _, err = planted_text(plant, read(os.path.join(ROOT, plant["file"])).decode())
            if err:
                bad.append(f"{plant['name']}: {err}")
        print(f"{len(plants)} plants, {len(plants) - len(bad)} apply")
        sys.exit("\n".join(bad) if bad else 0)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    started = time.monotonic()
    order, times = baseline(args)
    log(f"unplanted: {len(order)} tests, {sum(times.values()):.1f} s")
    results = []
    for plant in plants:
        log(f"plant {plant['name']}")
        r = run_plant(plant, order, times, args)
        if args.real:
            r["real"], failed = run_real(plant)
            where = f"`--test {plant['real']['test']} {plant['real']['filter']}`".replace(" `", "`")
            failed = failed.split(", ") if failed else []
            if r["real"] == "fail" and failed:
                more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
                r["real"] = f"fails: `{failed[0]}`{more}"
            elif r["real"] in ("pass", "hang"):
                r["real"] = f"{'passes' if r['real'] == 'pass' else 'hangs'} ({where})"
        log(f"  {r['status']}: {r.get('test', '')} seed {r.get('seed')} "
            f"replayed {r.get('replayed')} {r.get('time', 0):.1f} s; {r.get('detail', '')}")
        if r.get("replay_text"):
            log("  first failure:\n" + r["text"] + "\n  replay:\n" + r["replay_text"])
        results.append(r)
    sync_tree()  # leave the scratch tree unplanted
    out = table(results, args, commit, time.monotonic() - started)
    print(out)
    if args.results:
        with open(args.results, "w") as f:
            f.write(out)
    if args.expect:
        status = {r["name"]: r for r in results}
        bad = [n for n in args.expect.split(",")
               if status.get(n, {}).get("status") != "caught"
               or status[n].get("replayed") not in ("yes", "no seed")]
        if bad:
            sys.exit(f"not caught, or its seed did not replay: {', '.join(bad)}")


if __name__ == "__main__":
    main()
