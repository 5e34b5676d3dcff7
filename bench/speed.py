"""Time leaklint against the libcst parse floor on a directory of Python files.

    python bench/speed.py DIR [--repeat 3]

Prints seconds (median of the repeats), files per second and the ratio to the parse floor: the
time ``libcst.parse_module`` alone takes for every file, in this process. Numbers belong in
bench/RESULTS.md with the date, machine and versions; they are never asserted in unit tests.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _median_seconds(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()

    import libcst

    files = sorted(p for p in args.directory.rglob("*.py") if p.is_file())
    sources = []
    for path in files:
        try:
            sources.append(path.read_bytes())
        except OSError:
            pass

    def parse_all() -> None:
        for source in sources:
            try:
                libcst.parse_module(source)
            except Exception:
                pass

    def leaklint() -> None:
        command = [sys.executable, "-m", "leaklint", "--exit-zero", "--quiet", "--jobs", str(args.jobs), str(args.directory)]
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    floor = _median_seconds(parse_all, args.repeat)
    lint = _median_seconds(leaklint, args.repeat)
    size = sum(len(s) for s in sources) / 1e6
    print(f"{len(files)} files, {size:.1f} MB, median of {args.repeat}")
    print(f"{'what':<28}{'seconds':>10}{'files/s':>10}{'ratio':>8}")
    print(f"{'libcst parse floor (1 proc)':<28}{floor:>10.2f}{len(files) / floor:>10.0f}{1.0:>8.2f}")
    print(f"{f'leaklint --jobs {args.jobs}':<28}{lint:>10.2f}{len(files) / lint:>10.0f}{lint / floor:>8.2f}")


if __name__ == "__main__":
    main()
