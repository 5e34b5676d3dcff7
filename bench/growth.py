"""How analysis time and memory grow with file size: the same kind of code, 1x and 8x as long.

    python bench/growth.py [--lines 2700] [--factor 8] [--big-file-mb 2]

Writes generated training scripts (module-level code: imports, a model class, then block after
block of data loops with losses, backward passes, accumulations, lists and evaluation, the way a
long notebook exported to a script reads) of about ``--lines`` and ``--factor`` times as many
lines, lints each with every rule in a fresh process (``--no-cache``, one job) and prints the
wall time, the peak memory (RSS of the process) and the ratios. The goal (issue 20): 8x the lines
may take at most 10x the time. Then a file of ``--big-file-mb`` (just under the default
max-file-size of 2 MiB) must finish in under 60 s and 1 GB.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(x)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

# One block of module-level training code; {i} makes every block's names its own, and the
# accumulators of earlier blocks are read again later, as in a long script.
BLOCK = """\

# --- experiment {i} ---------------------------------------------------------------
loader_{i} = torch.utils.data.DataLoader(dataset, batch_size=32)
total_{i} = 0.0
history_{i} = []
for epoch in range(3):
    for x, y in loader_{i}:
        optimizer.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        total_{i} += loss.item()
        history_{i}.append(loss.detach())
    print("epoch", epoch, total_{i} / len(loader_{i}))
model.eval()
with torch.no_grad():
    correct_{i} = 0
    for x, y in loader_{i}:
        correct_{i} += (model(x).argmax(1) == y).sum().item()
model.train()
summary_{i} = {{"total": total_{i}, "history": history_{i}, "correct": correct_{i}}}
"""


def generate(lines: int) -> str:
    block_lines = BLOCK.count("\n")
    blocks = max(1, (lines - HEADER.count("\n")) // block_lines)
    return HEADER + "".join(BLOCK.format(i=i) for i in range(blocks))


_RUN_AND_REPORT_PEAK = """
import resource, runpy, sys
sys.argv = ["leaklint", *sys.argv[1:]]
try:
    runpy.run_module("leaklint", run_name="__main__")
except SystemExit:
    pass
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def measure(path: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one cold lint of ``path`` in a fresh process."""
    arguments = ["--select", "ALL", "--no-cache", "--jobs", "1", "--exit-zero", "-q", str(path)]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RUN_AND_REPORT_PEAK, *arguments], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2700)
    parser.add_argument("--factor", type=int, default=8)
    parser.add_argument("--big-file-mb", type=float, default=1.95)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="leaklint-growth-") as work:
        rows = []
        for lines in (args.lines, args.lines * args.factor):
            path = Path(work) / f"train_{lines}.py"
            path.write_text(generate(lines))
            seconds, peak = measure(path)
            rows.append((lines, path.stat().st_size, seconds, peak))
            print(f"{path.read_text().count(chr(10)):>7,} lines {path.stat().st_size / 1024:>8,.0f} KiB  {seconds:7.2f} s  peak {peak:6,.0f} MB")
        (small_lines, _, small_s, _), (big_lines, _, big_s, _) = rows
        print(f"{big_lines / small_lines:.0f}x the lines took {big_s / small_s:.1f}x the time (goal: at most {args.factor * 1.25:.0f}x)")
        target = int(args.big_file_mb * 1024 * 1024)
        text = generate(args.lines)
        lines = int(target / (len(text) / text.count("\n")))
        while len(generate(lines)) > target:
            lines -= 100
        path = Path(work) / "train_big.py"
        path.write_text(generate(lines))
        seconds, peak = measure(path)
        print(f"a {path.stat().st_size / 1024 / 1024:.2f} MiB file: {seconds:.1f} s, peak {peak:,.0f} MB (goal: under 60 s and 1,000 MB)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("LEAKLINT_NO_CACHE", "1")
    sys.exit(main())
