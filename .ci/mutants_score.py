#!/usr/bin/env python3
"""The mutation score: what .ci/mutants keeps of each shard, and the
per-file table RELIABILITY.md quotes, merged from every kept shard.

  mutants_score.py --test-args              nextest's arguments for the fast set
  mutants_score.py --keep OUTCOMES DEST CMD  keep a shard's outcomes in DEST
  mutants_score.py --score [--check|--write] print the table (--check: RELIABILITY.md has it;
                                             --write: put it there)
  mutants_score.py --next core|rest|sim N [FILES]  a regex of the next N mutants no kept run has tested
                                             (FILES: a regex the files' paths must match)

A kept shard is a text file: `#` lines (the group, commit, date and the
command), then one line a mutant, `OUTCOME<TAB>NAME`, OUTCOME one of
caught, timeout (a hang, caught), missed, unviable. A mutant listed in
mutants/equivalent.toml (by its name without its line, which moves with
every edit above it) counts as equivalent instead of missed.
"""

import datetime
import hashlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "mutants" / "runs"
EQUIVALENT = ROOT / "mutants" / "equivalent.toml"
DOC = ROOT / "RELIABILITY.md"
BEGIN = "<!-- mutants table: .ci/mutants score -->"
END = "<!-- end of mutants table -->"
OUTCOMES = {
    "CaughtMutant": "caught",
    "Timeout": "timeout",
    "MissedMutant": "missed",
    "Unviable": "unviable",
}
# The core and the streams (every mutant run, 95% to reach); the rest, a
# quarter or more run, 85% to reach. As .ci/mutants' CORE.
CORE = re.compile(r"^(runtime/src/event_loop/|runtime/src/io\.rs|runtime/src/time/"
                  r"|net/src/outbox\.rs|net/src/io/)")


def test_args():
    config = tomllib.loads((ROOT / ".cargo" / "mutants.toml").read_text())
    args = [f"--package={p}" for p in config["test_package"]]
    args += config.get("additional_cargo_args", []) + config["additional_cargo_test_args"]
    print(" ".join(args))


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()


def keep(outcomes, dest, command):
    data = json.loads(Path(outcomes).read_text())
    lines = []
    for o in data["outcomes"]:
        scenario = o["scenario"]
        if scenario == "Baseline" or not isinstance(scenario, dict):
            continue
        lines.append(f"{OUTCOMES[o['summary']]}\t{scenario['Mutant']['name']}")
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    head = [
        f"# commit {git('rev-parse', 'HEAD')}",
        f"# date {datetime.date.today().isoformat()}",
        f"# cargo-mutants {data.get('cargo_mutants_version', '?')}",
        f"# command {command}",
    ]
    # Each file's code as tested, so the score can tell a file changed
    # since without the history (a shallow clone has none).
    files = sorted({line.split("\t", 1)[1].split(":", 1)[0] for line in lines})
    head += [f"# code {f} {code_hash((ROOT / f).read_text())}" for f in files]
    dest.write_text("\n".join(head + sorted(lines)) + "\n")
    print(f"{dest}: {len(lines)} mutants")


def code_hash(text):
    """A file's code, its unit tests cut off (the `#[cfg(test)]` module at
    its end, where every library file keeps them): a new test changes no
    mutant's outcome but a catch, and moves no mutant's line. A comment
    line counts as a line, whatever it says: docs reworded in as many
    lines move no mutant either."""
    cut = text.find("\n#[cfg(test)]\nmod tests")
    code = text if cut < 0 else text[:cut]
    code = "\n".join("//" if line.lstrip().startswith("//") else line
                      for line in code.split("\n"))
    return hashlib.sha1(code.encode()).hexdigest()[:16]


def unplaced(name):
    """A mutant's name without its line: `file:column: what`. Lines move
    with every edit above; the column tells apart mutants of one line
    (`a | b | c` has two `|`) and rarely moves."""
    return re.sub(r"^([^:]+):\d+:(\d+):", r"\1:\2:", name)


def equivalents():
    if not EQUIVALENT.exists():
        return {}
    table = tomllib.loads(EQUIVALENT.read_text())
    found = {}
    for entry in table.get("mutant", []):
        reason = entry["reason"].strip()
        if not reason or "hard to test" in reason.lower():
            sys.exit(f"{EQUIVALENT}: {entry['name']}: a reason why no program can tell")
        if entry["name"] in found:
            sys.exit(f"{EQUIVALENT}: {entry['name']}: listed twice")
        found[entry["name"]] = reason
    return found


def listed():
    """Every mutant cargo-mutants makes of the library now, by file."""
    out = subprocess.run(["cargo", "mutants", "--list", "--workspace"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    per_file = {}
    for line in out.splitlines():
        per_file.setdefault(line.split(":", 1)[0], set()).add(line.strip())
    return per_file


def run_order(path):
    """Kept runs in the order their outcomes apply: shards first, then the
    mutants run again after a fix (`again-*`, `sim-again-*`), each kind
    by its number (`again-10` after `again-9`), so a later run's outcome
    replaces an earlier one's."""
    stem = path.stem
    kind, _, number = stem.rpartition("-")
    if number.isdigit() and not kind.endswith("-of"):
        return ("again-" in path.name, kind, int(number), "")
    return ("again-" in path.name, stem, 0, "")


def score(mode):
    eq = equivalents()
    runs = {}
    commits, dates, shards = set(), set(), []
    # Shards first, then the mutants run again after a fix (`again-*`),
    # whose outcomes replace the shards'.
    paths = sorted(RUNS.glob("*.txt"), key=run_order)
    sim = {}
    for path in paths:
        shards.append(path.stem)
        # tests/sim alone (`shard sim`): counted apart, never the score.
        into = sim if path.name.startswith("sim-") else runs
        blobs = {}
        for line in path.read_text().splitlines():
            if line.startswith("# commit "):
                commits.add(line.split()[-1][:7])
            elif line.startswith("# date "):
                dates.add(line.split()[-1])
            elif line.startswith("# code "):
                _, _, file, blob = line.split()
                blobs[file] = blob
            elif line and not line.startswith("#"):
                outcome, name = line.split("\t", 1)
                into[name] = (outcome, blobs.get(name.split(":", 1)[0]))
    per_file = listed()
    rows, totals = [], {}
    for file in sorted(per_file):
        names = per_file[file]
        counts = dict.fromkeys(["run", "caught", "timeout", "missed", "unviable",
                                "equivalent"], 0)
        # Changed since the run that tested one of its mutants: its lines
        # may have moved, so some kept outcomes no longer match a mutant
        # (and are not counted); the row says so.
        changed = False
        now = code_hash((ROOT / file).read_text())
        for name in names:
            if name not in runs:
                continue
            outcome, blob = runs[name]
            changed |= blob != now
            if outcome == "missed" and unplaced(name) in eq:
                outcome = "equivalent"
            counts["run"] += 1
            counts[outcome] += 1
        group = "core" if CORE.match(file) else "rest"
        viable = counts["run"] - counts["unviable"] - counts["equivalent"]
        caught = counts["caught"] + counts["timeout"]
        pct = f"{100 * caught / viable:.0f}%" if viable else "-"
        rows.append(f"| `{file}`{' (changed since)' if changed else ''} | {group} | "
                    f"{counts['run']} of {len(names)} | {counts['caught']} | "
                    f"{counts['timeout']} | {counts['missed']} | {counts['unviable']} | "
                    f"{counts['equivalent']} | {pct} |")
        for key, value in counts.items():
            totals.setdefault(group, {}).setdefault(key, 0)
            totals[group][key] += value
        totals[group].setdefault("of", 0)
        totals[group]["of"] += len(names)
    lines = [
        BEGIN,
        "| file | group | run | caught | hangs caught | missed | unviable | equivalent | score |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    for group, t in sorted(totals.items()):
        viable = t["run"] - t["unviable"] - t["equivalent"]
        caught = t["caught"] + t["timeout"]
        pct = f"{100 * caught / viable:.1f}%" if viable else "-"
        lines.append(f"| **all of {group}** | | {t['run']} of {t['of']} | {t['caught']} | "
                     f"{t['timeout']} | {t['missed']} | {t['unviable']} | "
                     f"{t['equivalent']} | {pct} |")
    lines.append("")
    if sim:
        # Of the core mutants run against tests/sim alone, the viable ones
        # (not unviable, not equivalent) it caught, and what the fast set
        # made of the same mutants where it ran them too.
        # Only the core's mutants as the code has them now: a sim run also
        # tests whatever cargo-mutants lets through its filter (see
        # `files_matching` in .ci/mutants), and lines move.
        current = set().union(*per_file.values())
        viable = [n for n, (o, _) in sim.items()
                  if n in current and CORE.match(n.split(":", 1)[0])
                  and o != "unviable" and not (o == "missed" and unplaced(n) in eq)]
        caught = [n for n in viable if sim[n][0] in ("caught", "timeout")]
        both = [n for n in viable if n in runs and runs[n][0] != "unviable"]
        full = sum(runs[n][0] in ("caught", "timeout") for n in both)
        simc = sum(sim[n][0] in ("caught", "timeout") for n in both)
        lines.append(f"tests/sim alone caught {len(caught)} of {len(viable)} viable core mutants "
                     f"run against it ({100 * len(caught) / max(len(viable), 1):.0f}%); of the "
                     f"{len(both)} the fast set ran too, it caught {simc} and the fast set {full}.")
        lines.append("")
    lines.append(f"From {len(shards)} kept shard(s) in `mutants/runs/`"
                 + (f", run {min(dates)} to {max(dates)} on {', '.join(sorted(commits))}"
                    if dates else "") + ".")
    lines.append(END)
    table = "\n".join(lines)
    # A mutant some test fails is no equivalent: either the listed reason
    # is wrong or a test is flaky (issue 42: a catch must be real). Only
    # outcomes at the current code count.
    contradicted = sorted(
        name for file, names in per_file.items() for name in names
        if name in runs and runs[name][0] in ("caught", "timeout")
        and runs[name][1] == code_hash((ROOT / file).read_text())
        and unplaced(name) in eq)
    if mode == "--check":
        if contradicted:
            sys.exit(f"{EQUIVALENT.name} lists mutants a test caught (a wrong reason, or a "
                     "flaky test: run them again):\n" + "\n".join(contradicted))
        text = DOC.read_text()
        if table not in text:
            sys.exit(f"{DOC.name}: the mutants table is not the runs' (.ci/mutants score):\n{table}")
        print(f"{DOC.name}: the mutants table matches mutants/runs/")
    elif mode == "--write":
        text = DOC.read_text()
        start, end = text.index(BEGIN), text.index(END) + len(END)
        DOC.write_text(text[:start] + table + text[end:])
        print(f"{DOC.name}: the mutants table written from mutants/runs/")
    else:
        print(table)


def kept(sim):
    """Each mutant a kept run tested at the current code, with its outcome:
    tests/sim alone's runs (`sim-*`) if `sim`, else the fast set's (an
    `again-*` run's outcome replacing a shard's)."""
    now, done = {}, {}
    paths = sorted(RUNS.glob("*.txt"), key=run_order)
    for path in paths:
        if path.name.startswith("sim-") != sim:
            continue
        blobs = {}
        for line in path.read_text().splitlines():
            if line.startswith("# code "):
                _, _, file, blob = line.split()
                blobs[file] = blob
            elif line and not line.startswith("#"):
                outcome, name = line.split("\t", 1)
                file = name.split(":", 1)[0]
                if file not in now:
                    now[file] = code_hash((ROOT / file).read_text())
                if blobs.get(file) == now[file]:
                    done[name] = outcome
    return done


def next_batch(group, count, files=""):
    """A regex naming the next `count` mutants of `group` no kept run has
    tested at the current code, taken from each file in turn: a shard by
    index (`--shard K/N`) picks other mutants once the list shifts, so
    later shards would run earlier ones again; the files with the fewest
    kept outcomes come first. For `sim`, the core's
    mutants the fast set has run (viable ones) and tests/sim alone has
    not, so the two scores compare mutant for mutant. `files`, a regex,
    keeps to the files whose paths it matches (say, those a change in
    progress leaves alone)."""
    if group == "sim":
        fast = kept(sim=False)
        done = kept(sim=True)
        wanted = {n for n, outcome in fast.items() if outcome != "unviable"}
    else:
        done = kept(sim=False)
        wanted = None
    files = [(file, names) for file, names in listed().items()
             if (group != "rest") == bool(CORE.match(file)) and re.search(files, file)]
    # The files with the fewest kept outcomes first, so that a batch
    # smaller than the number of files reaches those no run has touched
    # yet (every file represented), rather than the same first few.
    files.sort(key=lambda item: (sum(n in done for n in item[1]), item[0]))
    queues = [sorted(n for n in names if n not in done and (wanted is None or n in wanted))
              for _, names in files]
    batch = []
    while len(batch) < count and any(queues):
        for queue in queues:
            if queue and len(batch) < count:
                batch.append(queue.pop(0))
    if not batch:
        sys.exit(f"every {group} mutant has been run at the current code")
    print("^(" + "|".join(re.escape(n) for n in batch) + ")$")


def main(argv):
    if argv[:1] == ["--test-args"]:
        test_args()
    elif argv[:1] == ["--keep"] and len(argv) == 4:
        keep(*argv[1:])
    elif argv[:1] == ["--next"] and len(argv) in (3, 4):
        next_batch(*argv[1:2], int(argv[2]), *argv[3:])
    elif argv[:1] == ["--score"] and argv[1:] in ([], ["--check"], ["--write"]):
        score(argv[1] if len(argv) > 1 else "")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
