"""LL107 retry-inside-except: recovering from an out-of-memory error inside the ``except`` clause."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class RetryInsideExcept(Rule):
    code = "LL107"
    name = "retry-inside-except"
    severity = Severity.PEAK
    summary = "Work is retried inside an except clause for out-of-memory errors, while the failed step is still alive."
    help = "set a flag in the except clause (oom = True) and retry after the try statement"
    docs = """
## What it finds
An `except` clause that catches an out-of-memory error — `torch.cuda.OutOfMemoryError`,
`torch.OutOfMemoryError`, `MemoryError`, or `RuntimeError`/`Exception`/a bare `except:` whose body
checks for "out of memory" (or calls an `is_oom(...)`-style helper) — and, inside the clause, runs
something that allocates again: a model forward, a `.backward()`, an optimizer step, the enclosing
function itself (recursive retry), a function of the same file that does one of those, or (for a
function defined elsewhere, such as `run_model`) the same call the `try` body made. Generic
`RuntimeError`/`Exception` handlers without an out-of-memory check are reported with medium
confidence, and only when the `try` body itself runs a forward, a backward or an optimizer step.

## Why it matters
While an `except` clause runs, the exception being handled keeps its traceback, and the traceback
keeps every frame between the handler and the failed allocation, with all their local variables:
the batch, the activations, the partial graph of the step that ran out of memory. `del e`,
`gc.collect()` and `torch.cuda.empty_cache()` cannot free them while the clause is still running.
The retry then allocates on top of the failed attempt, so it runs out of memory again (and a
recursive retry nests one more failed step per attempt).

Severity is peak, not leak: once the `except` clause ends, the traceback and the failed step's
tensors are freed, so memory does not grow from step to step; what the pattern costs, and what
`leaklint verify LL107` measures, is a higher high-water mark while the retry runs (the failed
attempt's memory plus the retry's), which is exactly what makes the retry fail.

## Example
```python
def train_step(model, batch, optimizer):
    try:
        loss = model(batch).mean()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        for half in batch.chunk(2):
            model(half).mean().backward()
    optimizer.step()
```

## Use instead
```python
def train_step(model, batch, optimizer):
    oom = False
    try:
        loss = model(batch).mean()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        oom = True
    if oom:
        torch.cuda.empty_cache()
        for half in batch.chunk(2):
            model(half).mean().backward()
    optimizer.step()
```

## Fix safety
No automatic fix: the retry has to move out of the `except` clause (set a flag, leave the
handler, then retry), which restructures the control flow around the step.

## Known false positives
A handler that only logs, sets a flag, clears the cache, re-raises, or leaves with `continue`,
`break` or `return` is not reported, and neither is a handler for an unrelated exception
(`KeyError`, `ValueError`, `StopIteration`...), nor a catch-all fallback around code that runs no
model (`torch.load(path)` retried with `map_location="cpu"`). A helper of the same file called in
both the `try` body and the handler counts only if it runs the model, backward or a step itself. A fallback that is cheap on purpose (a forward pass
on the CPU inside the handler) is still reported: the failed step's device memory stays pinned
while it runs; move it after the `try` statement or suppress it with `# noqa: LL107`.

## References
- PyTorch FAQ, "My out of memory exception handler can't allocate memory" ("move your OOM recovery
  code outside of the except clause"): https://pytorch.org/docs/stable/notes/faq.html
- "Make sure that you are not holding on to tensors via an exception object ... do error recovery
  outside of the catch block": https://github.com/pytorch/pytorch/issues/18853
- "the python error holds onto all the local variables of the stack trace":
  https://github.com/pytorch/pytorch/issues/27600
- Runtime repro: `leaklint verify LL107` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch
def train_step(model, batch, optimizer):
    oom = False
    try:
        loss = model(batch).mean()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        oom = True
        torch.cuda.empty_cache()
    if oom:
        for half in batch.chunk(2):
            model(half).mean().backward()
    optimizer.step()
""",
        """
import torch
for x, y in loader:
    try:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    except RuntimeError as e:
        if "out of memory" not in str(e):
            raise
        print("skipping batch after OOM")
        optimizer.zero_grad()
        torch.cuda.empty_cache()
        continue
""",
        """
def load_batch(cache, key, model, x):
    try:
        return cache[key]
    except KeyError:
        out = model(x)
        cache[key] = out.detach()
        return out
""",
        """
import logging
def fit(trainer, model):
    try:
        trainer.fit(model)
    except Exception:
        logging.exception("training failed")
        trainer.save_checkpoint("crash.ckpt")
        raise
""",
        """
import torch
def _adjust_batch_size(trainer, factor):
    trainer.batch_size = int(trainer.batch_size * factor)
    return trainer.batch_size
def scale_batch_size(trainer, model):
    for _ in range(10):
        try:
            trainer.fit(model)
            _adjust_batch_size(trainer, 2.0)
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            _adjust_batch_size(trainer, 0.5)
            break
def load_state(path):
    try:
        return torch.load(path)
    except Exception:
        return torch.load(path, map_location="cpu")
""",
    )
    INVALID = (
        """
import torch
def train_step(model, batch, optimizer):
    try:
        loss = model(batch).mean()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        half = batch[: len(batch) // 2]
        loss = model(half).mean()  # expect: LL107
        loss.backward()
    optimizer.step()
""",
        """
def run(model, x, batch_size):
    try:
        return model(x, batch_size)
    except RuntimeError as e:
        if "out of memory" in str(e):
            return run(model, x, batch_size // 2)  # expect: LL107
        raise
""",
        """
try:
    run_model(batch_size)
except RuntimeError:
    for _ in range(batch_size):
        run_model(1)  # expect: LL107
""",
        """
import torch
class Trainer:
    def step(self, batch):
        loss = self.model(batch).sum()
        loss.backward()
        self.optimizer.step()
    def fit(self, loader):
        for batch in loader:
            try:
                self.step(batch)
            except torch.OutOfMemoryError:
                self.optimizer.zero_grad()
                for part in batch.split(len(batch) // 2):
                    self.step(part)  # expect: LL107
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """The retry is a call inside an ``except`` clause that may catch running out of memory."""
        return shape.oom_handler_call

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll107_retry_inside_except import check

        return check(facts)

    class Repro(Rule.Repro):
        """A step that runs out of memory on a large batch and retries on halves inside the `except`
        clause (the failed attempt's activations still alive), vs retrying after the clause."""

        def setup(self, ctx):
            import torch

            class Budget(torch.nn.Module):
                """Raises the out-of-memory error a real device would for batches above `limit`."""
                def __init__(self, limit):
                    super().__init__()
                    self.limit = limit
                def forward(self, x):
                    if x.size(0) > self.limit:
                        raise torch.OutOfMemoryError("repro: batch too large")
                    return x

            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), Budget(128), torch.nn.Linear(512, 1)).to(ctx.device)
            ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.01)
            ctx.batch = torch.randn(256, 64, device=ctx.device)

        def leaky(self, ctx):
            import torch
            ctx.optimizer.zero_grad()
            try:
                loss = ctx.model(ctx.batch).mean()
                loss.backward()
            except torch.OutOfMemoryError:
                for half in ctx.batch.chunk(2):
                    ctx.model(half).mean().backward()  # noqa: LL107 (the leaky variant)
            ctx.optimizer.step()

        def fixed(self, ctx):
            import torch
            ctx.optimizer.zero_grad()
            oom = False
            try:
                loss = ctx.model(ctx.batch).mean()
                loss.backward()
            except torch.OutOfMemoryError:
                oom = True
            if oom:
                for half in ctx.batch.chunk(2):
                    ctx.model(half).mean().backward()
            ctx.optimizer.step()
