"""What watching a real run costs per step: watch_steps, the Lightning/transformers callbacks, leaklint run.

    python bench/run_overhead.py [--threads 1] [--repeats 3] [--steps 60] [--warmup 10] [--after 60]

A small realistic CPU training step (batch 64 of 28x28 images: a 2-conv CNN and a 3-layer MLP,
SGD) is timed step by step, without a watcher and under one, and the per-step times are split by
the watcher's phases:

* ``warm-up``: nothing measured (only the boundary is counted);
* ``host``: one ``mallinfo2`` reading per step;
* ``tensor``: the CPU profiler's memory reports and the labeling dispatch mode, for every op;
* ``judge``: the one step whose boundary completes the window and computes the report;
* ``after``: the steps after the window (watch_steps removes its hook; a callback's hook returns
  at once).

Times are the main thread's CPU time (``--clock wall`` for the wall clock): with one torch thread
(``--threads 1``, the default) the step runs on that thread, and on a shared machine the wall clock
also counts the time other processes held the core. Each figure is the lower quartile of the
phase's per-step times (other processes only ever add time), the best of ``--repeats`` runs; the
added time compares it with the same steps of an unwatched run of the same loop. Lightning and transformers rows appear when they are installed
(their per-step time is measured between consecutive ``on_train_batch_end``/``on_step_end``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from leaklint.runtime.steps import phase_sizes  # noqa: E402
from leaklint.runtime.watch import watch_steps  # noqa: E402

BATCH = 64
#: The main thread's CPU time by default: with one torch thread the step runs on it, and on a
#: shared machine the wall clock also counts the time other processes had the core.
CLOCK: Callable[[], float] = time.thread_time


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10),
    )


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


MODELS: dict[str, Callable[[], nn.Module]] = {"cnn": cnn, "mlp": mlp}


def data(count: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    return [(torch.randn(BATCH, 1, 28, 28), torch.randint(0, 10, (BATCH,))) for _ in range(count)]


def phases(steps: int, warmup: int, total: int) -> dict[str, range]:
    """Step indices (0-based) of each phase: step i ends at boundary i + 1."""
    host, _ = phase_sizes(steps, warmup)
    tensor_start = warmup + host
    return {
        "warm-up": range(0, warmup),
        "host": range(warmup, tensor_start),
        "tensor": range(tensor_start, steps - 1),
        "judge": range(steps - 1, steps),
        "after": range(steps, total),
    }


def plain_loop(model_name: str, total: int, watched: dict | None) -> list[float]:
    """Per-step seconds of a hand-written loop, under ``watch_steps(**watched)`` when given."""
    torch.manual_seed(0)
    model = MODELS[model_name]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batches = data(16)
    times = []

    def run() -> None:
        for index in range(total):
            x, y = batches[index % len(batches)]
            start = CLOCK()
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            times.append(CLOCK() - start)

    if watched is None:
        run()
    else:
        with watch_steps(**watched):
            run()
    return times


def lightning_loop(model_name: str, total: int, watched: dict | None) -> list[float] | None:
    try:
        import lightning.pytorch as pl
    except ImportError:
        return None
    import tempfile

    from leaklint.runtime.lightning import LeakWatch

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = MODELS[model_name]()

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)

    stamps: list[float] = []

    class Clock(pl.Callback):
        def on_train_batch_end(self, *args, **kwargs) -> None:
            stamps.append(CLOCK())

    batches = data(16)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches])), batch_size=BATCH,
    )
    callbacks = [Clock()] if watched is None else [LeakWatch(**watched), Clock()]
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as root:
        trainer = pl.Trainer(
            max_steps=total + 1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
            enable_progress_bar=False, enable_model_summary=False, default_root_dir=root, callbacks=callbacks,
        )
        trainer.fit(Module(), loader)
    # stamps[i] ends step i; step i's time is stamps[i] - stamps[i - 1] (the first step has none).
    return [float("nan")] + [b - a for a, b in zip(stamps, stamps[1:])][: total - 1]


def transformers_loop(model_name: str, total: int, watched: dict | None) -> list[float] | None:
    try:
        import accelerate  # noqa: F401
        import transformers
    except ImportError:
        return None
    import tempfile

    from leaklint.runtime.transformers import LeakWatch

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = MODELS[model_name]()

        def forward(self, x, y):
            return {"loss": nn.functional.cross_entropy(self.net(x), y)}

    batches = data(16)
    xs, ys = torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches])

    class Data(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(xs)

        def __getitem__(self, index):
            return {"x": xs[index], "y": ys[index]}

    stamps: list[float] = []

    class Clock(transformers.TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs) -> None:
            stamps.append(CLOCK())

    callbacks = [Clock()] if watched is None else [LeakWatch(**watched), Clock()]
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as root:
        arguments = transformers.TrainingArguments(
            output_dir=root, max_steps=total + 1, per_device_train_batch_size=BATCH, report_to=[], save_strategy="no",
            logging_strategy="no", disable_tqdm=True, use_cpu=True, dataloader_num_workers=0, learning_rate=0.01,
        )
        transformers.Trainer(model=Model(), args=arguments, train_dataset=Data(), callbacks=callbacks).train()
    return [float("nan")] + [b - a for a, b in zip(stamps, stamps[1:])][: total - 1]


RUN_SCRIPT = """\
import builtins
import torch
from torch import nn
import run_overhead as bench

torch.manual_seed(0)
model = bench.MODELS[{model!r}]()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
batches = bench.data(16)
times = builtins._leaklint_bench_times
for index in range({total}):
    x, y = batches[index % len(batches)]
    start = bench.CLOCK()
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    times.append(bench.CLOCK() - start)
"""


def run_command_loop(model_name: str, total: int, watched: dict | None) -> list[float]:
    """Per-step seconds of the same loop as a script: run as it is, or under ``leaklint run``
    (its trace function on every call, the project's lines counted, the meters by phase; the
    script is stopped at the end of the window, so there is no ``after``)."""
    import builtins
    import runpy
    import tempfile

    from leaklint.runtime.run import run_script

    times: list[float] = []
    builtins._leaklint_bench_times = times  # type: ignore[attr-defined]
    bench_dir = str(Path(__file__).resolve().parent)
    sys.path.append(bench_dir)
    try:
        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder) / "train.py"
            script.write_text(RUN_SCRIPT.format(model=model_name, total=total))
            if watched is None:
                runpy.run_path(str(script), run_name="__main__")
            else:
                run_script(str(script), steps=watched["steps"], warmup=watched["warmup"])
    finally:
        sys.path.remove(bench_dir)
        del builtins._leaklint_bench_times  # type: ignore[attr-defined]
    return times


def quietly(loop: Callable, *args: object) -> list[float] | None:
    """The trainers' banners, tips and metrics dicts, kept out of the table."""
    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "pytorch_lightning", "transformers"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return loop(*args)


def low(times: list[float], indices: range) -> float:
    """The lower quartile of the steps' times (the median for a phase of fewer than 4 steps):
    other processes only ever add time, so the low end is the step's own cost."""
    picked = sorted(times[i] for i in indices if i < len(times) and times[i] == times[i])
    if not picked:
        return float("nan")
    return picked[len(picked) // 4] if len(picked) >= 4 else statistics.median(picked)


def boundary_costs(calls: int = 20000) -> dict[str, float]:
    """Seconds per call of what a step pays outside the tensor phase, timed alone (too small to
    see in a step's time on a busy machine): the optimizer hook with its boundary during the
    warm-up, and one host heap reading."""
    from leaklint.runtime.host_meter import HeapMeter
    from leaklint.runtime.steps import StepMeter, on_optimizer_steps

    parameter = nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=0.0)
    meter = StepMeter(steps=10 * calls, warmup=5 * calls)  # stays in its warm-up
    results = {"optimizer.step() alone": float("inf"), "optimizer.step() + hook": float("inf")}
    for _ in range(5):  # alternated, best of five: the difference is a microsecond
        for label, hooked in (("optimizer.step() alone", False), ("optimizer.step() + hook", True)):
            handle = on_optimizer_steps(meter.boundary) if hooked else None
            start = time.perf_counter()
            for _ in range(calls // 5):
                optimizer.step()
            results[label] = min(results[label], (time.perf_counter() - start) / (calls // 5))
            if handle is not None:
                handle.remove()
    heap = HeapMeter()
    if heap.unavailable() is None:
        start = time.perf_counter()
        for _ in range(calls):
            heap.read()
        results["host heap reading"] = (time.perf_counter() - start) / calls
    return results


def ops_per_step(model_name: str) -> int:
    """aten operators one plain step runs (the tensor phase's cost grows with them)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            Count.ops += 1
            return func(*args, **(kwargs or {}))

    model = MODELS[model_name]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    (x, y), = data(1)
    for counting in (False, True):  # the first step creates the momentum buffers
        with Count() if counting else contextlib.nullcontext():
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    return Count.ops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: steadier timings on a shared machine)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60, help="the watcher's steps (window), default 60")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--after", type=int, default=60, help="steps timed after the window")
    parser.add_argument("--models", default="cnn,mlp")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="cpu: the main thread's CPU time (default); wall: perf_counter")
    options = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.thread_time if options.clock == "cpu" else time.perf_counter
    torch.set_num_threads(options.threads)
    warnings.simplefilter("ignore")
    total = options.steps + options.after
    watched = {"steps": options.steps, "warmup": options.warmup}
    split = phases(options.steps, options.warmup, total)
    costs = boundary_costs()
    print("outside the tensor phase (timed alone, wall clock): " + ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in costs.items()))
    for model_name in options.models.split(","):
        print(f"{model_name}: {ops_per_step(model_name)} aten operators per plain step")
    print(f"torch {torch.__version__}, {options.threads} thread(s), {options.clock} clock, batch {BATCH}, window {options.steps} steps "
          f"({options.warmup} warm-up), best of {options.repeats}; time per step (lower quartile), then +ms added vs the same steps unwatched")
    print(f"{'loop':<30}{'unwatched':>11}" + "".join(f"{name:>19}" for name in split))
    loops = {
        "plain + watch_steps": plain_loop, "Lightning + LeakWatch": lightning_loop, "transformers + LeakWatch": transformers_loop,
        "script + leaklint run": run_command_loop,
    }
    for model_name in options.models.split(","):
        for label, loop in loops.items():
            best_base = float("inf")
            best_phase = {name: float("inf") for name in split}
            best_same = {name: float("inf") for name in split}  # the same steps, unwatched
            skipped = False
            for _ in range(options.repeats):
                base = quietly(loop, model_name, total, None)
                timed = quietly(loop, model_name, total, watched)
                if base is None or timed is None:
                    skipped = True
                    break
                best_base = min(best_base, low(base, range(options.warmup, total)))
                for name, indices in split.items():
                    best_phase[name] = min(best_phase[name], low(timed, indices))
                    best_same[name] = min(best_same[name], low(base, indices))
            row = f"{model_name + ' ' + label:<30}"
            if skipped:
                print(f"{row}  (not installed)")
                continue
            row += f"{best_base * 1e3:>9.2f}ms"
            for name in split:
                if best_phase[name] == float("inf"):
                    row += f"{'-':>19}"  # leaklint run stops the script at the window's end
                    continue
                # Against the same steps unwatched (best runs of each): the loop's own drift cancels.
                row += f"{best_phase[name] * 1e3:>9.2f}ms{(best_phase[name] - best_same[name]) * 1e3:>+8.2f}"
            print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
