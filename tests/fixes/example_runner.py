"""Runs code snippets before and after their fixes, in a fresh namespace each, and says which ran.

Used by ``test_fixes_keep_programs_running.py`` in a subprocess (torch is imported once there):
reads ``[{"id", "original", "fixed"}, ...]`` as JSON on standard input and writes
``[{"id", "original", "fixed"}, ...]`` to the file named by its argument, where each field is ``"ok"``, ``"skipped"`` (the original
did not run, so the pair says nothing) or the error the code raised.

A snippet of a rule's examples uses free names (``model``, ``loader``, ``optimizer``...): the
namespace gives them small real objects, and every function the snippet defines whose
parameters all have such values is called once, so the code inside functions runs too.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import signal
import sys
import time
import warnings

SECONDS_PER_RUN = 20


class _TimedOut(Exception):
    pass


def _namespace() -> dict:
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    batches = [(torch.randn(4, 8), torch.randint(0, 4, (4,))) for _ in range(3)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = batches[0]
    names = {
        "model": model, "net": model, "optimizer": optimizer, "opt": optimizer,
        "criterion": nn.CrossEntropyLoss(), "loss_fn": nn.CrossEntropyLoss(),
        "x": x, "y": y, "inputs": x, "targets": y, "labels": y, "batch": batches[0],
        "device": "cpu", "epochs": 2, "num_epochs": 2,
    }
    for name in ("loader", "train_loader", "val_loader", "test_loader", "dataloader", "data_loader",
                 "dataset", "batches"):
        names[name] = batches
    return names


def _run(source: str) -> str:
    namespace = {"__name__": "__main__", **_namespace()}
    signal.alarm(SECONDS_PER_RUN)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            _execute(source, namespace)
        return "ok"
    except _TimedOut:
        return "timed out"
    except BaseException as error:  # the example's own failure is the answer
        return f"{type(error).__name__}: {error}"[:300]
    finally:
        signal.alarm(0)


def _execute(source: str, namespace: dict) -> None:
    sys.argv = ["example.py"]  # a script's argument parser sees no arguments: its defaults
    exec(compile(source, "example.py", "exec"), namespace)
    for value in list(namespace.values()):
        if inspect.isfunction(value) and value.__code__.co_filename == "example.py":
            parameters = inspect.signature(value).parameters
            if all(name in namespace or p.default is not p.empty for name, p in parameters.items()):
                value(**{name: namespace[name] for name in parameters if name in namespace})


def main() -> None:
    def timed_out(signum, frame):
        raise _TimedOut

    report = sys.argv[1]
    signal.signal(signal.SIGALRM, timed_out)
    warnings.simplefilter("ignore")
    results = []
    for pair in json.load(sys.stdin):
        started = time.monotonic()
        original = _run(pair["original"])
        fixed = _run(pair["fixed"]) if original == "ok" else "skipped"
        seconds = round(time.monotonic() - started, 2)
        results.append({"id": pair["id"], "original": original, "fixed": fixed, "seconds": seconds})
    with open(report, "w", encoding="utf-8") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main()
