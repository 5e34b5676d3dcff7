"""Time leaklint against the libcst parse floor and its peers on a corpus, in one run.

    bash bench/corpus.sh /tmp/corpus            # 2,040 files of real PyTorch library code
    python bench/speed.py /tmp/corpus [--repeat 3] [--jobs N] [--peers-bin DIR]

Every measurement is a whole process, started from this interpreter (the project's environment:
its leaklint and its libcst), timed on the wall clock; the median of ``--repeat`` rounds is shown.
Rounds interleave the tools (one run of each per round), so load from elsewhere on a shared machine
falls on all of them alike, and the cold-to-floor ratios are also printed round by round (each cold
run against the floor run of its own round), which shows how much of a difference is noise. Rows:

* ``libcst parse floor``: ``libcst.parse_module`` on every file (1 process, and ``--jobs`` processes)
  plus the import; what any libcst linter pays at least, and the target for a cold leaklint run.
* ``leaklint cold``: ``--select ALL --no-cache`` (every rule, LL401 too); ``leaklint cold, default
  rules``: what a plain ``leaklint DIR`` runs; ``leaklint warm``: a second run over a primed
  ``--cache-dir``.
* Start-up: ``leaklint --version``; a one-file lint (``--select ALL --no-cache``) of the largest
  corpus file under 20 KB that the gate rejects (libcst never parses it) and of the largest one
  it lets through (libcst and the analysis run), and of one of the ``fixtures/`` with findings;
  ``import libcst`` in a bare interpreter, the floor of any run that needs the analysis, timed in
  the same rounds. ``--repeat 9 --skip parse,cold,warm,ruff,fixit,torchfix`` runs only these rows.
* ``fixit lint``, ``torchfix``, ``ruff check --select ALL --no-cache``: peers, when installed
  (looked up in ``--peers-bin``, then on PATH; install them in a separate environment, not the
  project's: ``python -m venv /tmp/peers && /tmp/peers/bin/pip install fixit==2.2.1
  torchfix==0.7.0 ruff==0.17.5``). Fixit and TorchFix take minutes: ``--peer-repeat 1`` runs them
  once per benchmark.

leaklint's modules are byte-compiled first (as ``pip install`` does), so start-up rows measure an
installed leaklint even where ``PYTHONDONTWRITEBYTECODE`` is set; without bytecode caches every run
compiles leaklint's own modules again (about 0.1 s more per one-file run).

Peak memory is the largest sum of the resident set sizes of the process and its children (sampled
every 20 ms from /proc), for the cold ``--jobs`` run. Numbers belong in bench/RESULTS.md with the
date, machine and versions; they are never asserted in unit tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "leaky_dcgan.py"

_PARSE_ALL = """
import sys, libcst
from concurrent.futures import ProcessPoolExecutor

def parse(path):
    try:
        libcst.parse_module(open(path, 'rb').read())
    except Exception:
        pass

paths = open(sys.argv[1]).read().splitlines()
jobs = int(sys.argv[2])
if jobs == 1:
    for path in paths:
        parse(path)
else:
    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(parse, paths, chunksize=8))
"""


@dataclass
class Row:
    name: str
    command: list[str]
    repeat: int
    times: list[float] = field(default_factory=list)
    peak_mb: float | None = None
    files: int | None = None  # how many files the row covers (None: the whole corpus)
    env: dict[str, str] | None = None  # added to the environment of the run

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def _children_rss_kb(root: int) -> int:
    """Resident memory of ``root`` and all its descendants, from /proc (Linux only)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, IndexError, ValueError):
            continue
    family = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in family and pid not in family:
                family.add(pid)
                grew = True
    return sum(rss.get(pid, 0) for pid in family)


def run_timed(command: list[str], *, measure_memory: bool = False, env: dict[str, str] | None = None) -> tuple[float, float | None]:
    """Wall seconds of one whole-process run, and its peak memory (MB) when asked."""
    environment = {**os.environ, **env} if env else None
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    peak = 0
    if measure_memory and os.path.isdir("/proc"):
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, _children_rss_kb(process.pid))
                done.wait(0.02)

        sampler = threading.Thread(target=sample)
        sampler.start()
        process.wait()
        done.set()
        sampler.join()
    else:
        process.wait()
    elapsed = time.perf_counter() - start
    return elapsed, (peak / 1024 if measure_memory else None)


def one_file_candidates(files: list[str], limit: int = 20_000) -> tuple[str | None, str | None]:
    """The largest file under ``limit`` bytes that the gate rejects for every rule (at the default
    confidence), and the largest one it lets through: the two kinds of one-file run."""
    from leaklint.engine import SourceProblem, check_syntax, decode
    from leaklint.findings import Confidence
    from leaklint.gate import read_contents, rules_for
    from leaklint.registry import all_rules

    rules = list(all_rules().values())
    gated: str | None = None
    analysed: str | None = None
    for path in sorted((p for p in files if os.path.getsize(p) < limit), key=os.path.getsize, reverse=True):
        try:
            text = decode(Path(path).read_bytes())
            tree = check_syntax(text, path)
        except SourceProblem:
            continue
        if rules_for(read_contents(text, tree), rules, Confidence.MEDIUM):
            analysed = analysed or path
        else:
            gated = gated or path
        if gated and analysed:
            break
    return gated, analysed


def paired(row: Row, base: Row) -> str:
    """The ratio round by round: each run against the run of ``base`` made minutes before it. On a
    shared machine load comes and goes between rounds, and a ratio of medians can pair a quiet run
    with a loaded one; the paired ratios show how much of a difference is noise."""
    ratios = [f"{mine / theirs:.2f}" for mine, theirs in zip(row.times, base.times)]
    return "per round " + ", ".join(ratios)


def compile_leaklint() -> None:
    """Write leaklint's bytecode caches, as ``pip install`` does."""
    import compileall

    import leaklint
    import leaklint.rules

    for package in (leaklint, leaklint.rules):  # rules/ may live apart from leaklint/ (editable installs)
        compileall.compile_dir(os.path.dirname(package.__file__), quiet=1)


def find_tool(name: str, peers_bin: Path | None) -> str | None:
    if peers_bin is not None and (peers_bin / name).exists():
        return str(peers_bin / name)
    return shutil.which(name)


def tool_version(command: list[str]) -> str:
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return (completed.stdout or completed.stderr).strip().splitlines()[0] if (completed.stdout or completed.stderr).strip() else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the median is shown (default 3)")
    parser.add_argument("--peer-repeat", type=int, default=None, help="rounds for fixit and torchfix (default: --repeat)")
    parser.add_argument("--jobs", type=int, default=None, help="processes for the parallel rows (default: usable CPUs)")
    parser.add_argument("--peers-bin", type=Path, help="a bin/ directory holding fixit, torchfix and ruff")
    parser.add_argument("--skip", default="", help="comma-separated row names to leave out (e.g. fixit,torchfix)")
    args = parser.parse_args()

    jobs = args.jobs or len(os.sched_getaffinity(0))
    peer_repeat = args.peer_repeat or args.repeat
    skip = {name.strip() for name in args.skip.split(",") if name.strip()}
    corpus = args.directory.resolve()
    files = sorted(str(p) for p in corpus.rglob("*.py") if p.is_file() and "/.wheels/" not in str(p))
    lines = sum(Path(p).read_bytes().count(b"\n") for p in files)
    work = Path(tempfile.mkdtemp(prefix="leaklint-bench-"))
    listing = work / "files.txt"
    listing.write_text("\n".join(files))
    cache_dir = work / "cache"
    python = sys.executable
    leaklint = [python, "-m", "leaklint", "--select", "ALL", "--exit-zero", "--quiet", "--jobs", str(jobs)]
    leaklint_default = [python, "-m", "leaklint", "--exit-zero", "--quiet", "--jobs", str(jobs)]
    gated_file, analysed_file = one_file_candidates(files)

    rows = [
        Row("libcst parse floor (1 proc)", [python, "-c", _PARSE_ALL, str(listing), "1"], args.repeat),
        Row(f"libcst parse floor ({jobs} proc)", [python, "-c", _PARSE_ALL, str(listing), str(jobs)], args.repeat),
        Row(f"leaklint cold (--jobs {jobs})", [*leaklint, "--no-cache", str(corpus)], args.repeat),
        Row(f"leaklint cold, default rules (--jobs {jobs})", [*leaklint_default, "--no-cache", str(corpus)], args.repeat),
        Row("leaklint cold (--jobs 1)", [*leaklint[:-2], "--jobs", "1", "--no-cache", str(corpus)], args.repeat),
        Row("leaklint warm", [*leaklint, "--cache-dir", str(cache_dir), str(corpus)], args.repeat),
        Row("leaklint --version", [python, "-m", "leaklint", "--version"], args.repeat, files=1),
    ]
    one_file = [*leaklint, "--no-cache"]
    for label, path in (("gated out", gated_file), ("analysed", analysed_file)):
        if path is not None:
            size = os.path.getsize(path) / 1000
            rows.append(Row(f"leaklint one file, {label} ({size:.0f} KB)", [*one_file, path], args.repeat, files=1))
    rows.append(Row(f"leaklint one file, {FIXTURE.name}", [*one_file, str(FIXTURE)], args.repeat, files=1))
    rows.append(Row("python -c 'import libcst' (floor)", [python, "-c", "import libcst"], args.repeat, files=1))
    peers = {
        "ruff": (["check", "--select", "ALL", "--no-cache", "--exit-zero", "--quiet", str(corpus)], args.repeat, "ruff check --select ALL --no-cache"),
        "fixit": (["lint", str(corpus)], peer_repeat, "fixit lint"),
        "torchfix": ([str(corpus)], peer_repeat, "torchfix"),
    }
    versions = {"python": sys.version.split()[0], "leaklint": tool_version([python, "-m", "leaklint", "--version"])}
    versions["libcst"] = tool_version([python, "-c", "import importlib.metadata as m; print(m.version('libcst'))"])
    for name, (arguments, repeat, label) in peers.items():
        binary = find_tool(name, args.peers_bin)
        if binary is None or name in skip:
            continue
        versions[name] = tool_version([binary, "--version"])
        rows.append(Row(label, [binary, *arguments], repeat))
    rows = [row for row in rows if not any(s in row.name for s in skip)]
    compile_leaklint()

    warm = next((row for row in rows if row.name == "leaklint warm"), None)
    if warm is not None:
        subprocess.run(warm.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # prime the cache
    for round_number in range(max(row.repeat for row in rows)):
        for row in rows:
            if round_number >= row.repeat:
                continue
            memory = row.name.startswith("leaklint cold (--jobs")
            elapsed, peak = run_timed(row.command, measure_memory=memory, env=row.env)
            row.times.append(elapsed)
            if peak is not None:
                row.peak_mb = max(row.peak_mb or 0, peak)
            print(f"  round {round_number + 1}: {row.name}: {elapsed:.2f} s", file=sys.stderr, flush=True)

    by_name = {row.name: row for row in rows}
    cold_row = by_name.get(f"leaklint cold (--jobs {jobs})")
    cold = cold_row.median if cold_row is not None else None
    floor_n = by_name.get(f"libcst parse floor ({jobs} proc)")
    print(f"corpus: {len(files)} files, {lines:,} lines; --jobs {jobs}; {os.cpu_count()} CPUs; median of {args.repeat} (fixit/torchfix: {peer_repeat})")
    print(f"one file: gated out {gated_file}, analysed {analysed_file}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print()
    print(f"| {'what':<36} | {'seconds':>8} | {'files/s':>8} | {'× leaklint cold':>15} | runs |")
    print(f"| {'-' * 36} | {'-' * 7}: | {'-' * 7}: | {'-' * 14}: | ---: |")
    for row in rows:
        count = row.files or len(files)
        ratio = f"{row.median / cold:>15.2f}" if cold else f"{'-':>15}"
        print(f"| {row.name:<36} | {row.median:>8.2f} | {count / row.median:>8.0f} | {ratio} | {len(row.times):>4} |")
    print()
    print("goals:")
    if floor_n is not None and cold_row is not None and cold is not None:
        print(f"  cold --select ALL / parse floor ({jobs} proc) = {cold / floor_n.median:.2f} (goal <= 2.0); {paired(cold_row, floor_n)}")
        default_row = by_name.get(f"leaklint cold, default rules (--jobs {jobs})")
        if default_row is not None:
            print(f"  cold, default rules / parse floor ({jobs} proc) = {default_row.median / floor_n.median:.2f} (goal <= 1.5); {paired(default_row, floor_n)}")
    for peer in ("fixit lint", "torchfix"):
        if peer in by_name and cold is not None:
            print(f"  {peer} / leaklint cold = {by_name[peer].median / cold:.1f} (goal >= 8)")
    ruff = by_name.get("ruff check --select ALL --no-cache")
    if ruff is not None and "leaklint warm" in by_name:
        print(f"  warm / ruff --no-cache = {by_name['leaklint warm'].median / ruff.median:.2f} (goal <= 2.0)")
    version_row = by_name.get("leaklint --version")
    if version_row is not None:
        print(f"  --version = {version_row.median:.2f} s (goal <= 0.1 s)")
    startup = [row for row in rows if row.name.startswith("leaklint one file")]
    floor_row = by_name.get("python -c 'import libcst' (floor)")
    for row in startup:
        against = f" = {row.median / floor_row.median:.2f} x import libcst; {paired(row, floor_row)}" if floor_row is not None else ""
        goal = " (goal <= 2.0)" if row.name.endswith(f"{FIXTURE.name}") else ""
        print(f"  {row.name.removeprefix('leaklint ')} = {row.median:.2f} s{against}{goal}")
    if floor_row is not None:
        print(f"  floor of a run that needs the analysis: Python + import libcst = {floor_row.median:.2f} s")
    if cold_row is not None and cold_row.peak_mb is not None:
        print(f"  peak memory, cold --jobs {jobs} = {cold_row.peak_mb:.0f} MB (goal < 500 MB)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
