"""LL402 empty-cache-in-loop: ``torch.cuda.empty_cache()`` / ``gc.collect()`` every training step."""

from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from leaklint.analysis.calls import CallGraph, call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_names_in
from leaklint.analysis.places import Level, Place, step_level
from leaklint.analysis.steps import is_per_step_hook
from leaklint.analysis.torch_api import EMPTY_CACHE, GC_COLLECT
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Words
from leaklint.rule import Measured, Rule, Violation

#: Frameworks whose training loops make a per-step ``gc.collect()`` a real cost worth reporting.
DL_FRAMEWORKS = (
    "torch", "tensorflow", "keras", "tf_keras", "jax", "flax", "lightning", "pytorch_lightning",
    "transformers", "accelerate", "deepspeed", "paddle", "mxnet",
)


class EmptyCacheInLoop(Rule):
    code = "LL402"
    name = "empty-cache-in-loop"
    severity = Severity.PERF
    summary = "torch.cuda.empty_cache() or gc.collect() runs every training step, slowing each step and freeing nothing that is still referenced."
    help = "drop the call, or run it once per epoch / after the loop; to fix a real leak, drop the reference that keeps the memory alive"
    needs = Words(*DL_FRAMEWORKS) & Names("empty_cache", "collect")
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(3, 1, 0), leaks=(0, 0))
    docs = """
## What it finds
`torch.cuda.empty_cache()` (also `torch.mps.empty_cache()`, `torch.xpu.empty_cache()` and
`torch.accelerator.memory.empty_cache()`) or `gc.collect()` inside a loop that runs once per
training or evaluation step: a loop that calls `.backward()`, steps an optimizer, iterates a
data loader or runs the model on each of its items (`for img in images: model(img)`) (high
confidence), or a loop over a `step` / `iteration` / `batch` counter (medium).
Also such a call inside a function the same file calls from such a loop (a `train_step` helper),
and inside framework hooks that run once per batch (Lightning's `training_step`, a callback's
`on_train_batch_end`): medium confidence.

It stays quiet when the call runs once per epoch (in an epoch loop, outside its inner data loop),
once per fold or model (a loop around a whole training loop), after the loop, or in recovery code:
inside an `except` handler, in the `finally` of a `try` that handles out-of-memory errors, or under
a flag that only an `except` handler sets (`oom = False` ... `except OutOfMemoryError: oom = True`
... `if oom: torch.cuda.empty_cache()`, LL107's recommended retry; also `if not ok:` and
`if err is not None:` when the handler keeps the exception). Such a branch runs after a failure,
not every step. A flag that is also set from anything other than a literal (`oom = x.numel() >
limit`) does not count: its branch may run on the normal path. Low
confidence only (hidden by default): a call guarded by `if step % N == 0` or by a memory check
(`if torch.cuda.memory_reserved() > limit`), which runs now and then, and a call in a loop that
does not train and drops its per-item objects with `del` first (a heavy per-sample analysis
loop, where the pause is small next to the work). `gc.collect()` is only reported in files that
use a deep-learning framework.

## Why it matters
`empty_cache()` returns the blocks PyTorch's caching allocator holds but no tensor uses to the
driver. It does not free a single tensor that is still referenced, so it cannot fix a leak; the
next step has to allocate the same blocks again through `cudaMalloc`, which is slow and
synchronises the device. Every step pays for it. `gc.collect()` walks every object the
interpreter tracks: with a model, an optimizer and a data pipeline loaded that is a pause of tens
to hundreds of milliseconds, every step, and it too frees only what nothing references. Measured
examples: removing a per-step `gc.collect()` took a PEFT training script from 108 s to 65 s for
250 steps with the same peak memory; a per-step `empty_cache()` added to the Hugging Face
`Trainer` was reverted because it slowed training.

## Example
```python
for epoch in range(args.epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()
        gc.collect()
```

## Use instead
```python
for epoch in range(args.epochs):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    torch.cuda.empty_cache()  # once per epoch, if another process needs the memory back
```

## Fix safety
No automatic fix: whether to delete the call, move it after the loop or run it once per epoch
depends on why it was added (another process sharing the GPU, fragmentation, a workaround for a
leak elsewhere), which the code does not say.

## Known false positives
Calling `empty_cache()` every step can be a deliberate trade when inputs change size every step
and fragmentation, not a leak, runs the device out of memory; prefer
`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, or throttle the call (`if step % 100 == 0`),
which this rule accepts. A loop is judged by what it does and by its names: a loop over
`batch_sizes` counts as a batch loop (medium confidence). Suppress a deliberate call with
`# noqa: LL402`. The false findings on bench/realcode: a batch-size search
that builds a model per trial, runs it and deletes it before `empty_cache()` (one call per trial,
reported like a training loop), and BLIP's retrieval script, whose epoch loop runs a whole
epoch and two evaluations through helper calls and then calls `empty_cache()` once, but is
taken for a step loop.

## References
- `torch.cuda.empty_cache` ("doesn't increase the amount of GPU memory available for PyTorch"):
  https://pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html
- CUDA memory management notes: https://pytorch.org/docs/stable/notes/cuda.html#memory-management
- A per-step `empty_cache()` slowing the Hugging Face Trainer, and its removal:
  https://github.com/huggingface/transformers/issues/31372,
  https://github.com/huggingface/transformers/pull/31530
- Removing a per-step `gc.collect()` and throttling `empty_cache()` (measured):
  https://github.com/huggingface/peft/pull/2894
- Forum thread on `empty_cache`: https://discuss.pytorch.org/t/about-torch-cuda-empty-cache/34232
- Runtime repro: `leaklint verify LL402` measures the leaky and the fixed loop body.
"""
    VALID = (
        # once per epoch, outside the data loop; and after the loop
        """
import torch
for epoch in range(10):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
    torch.cuda.empty_cache()
torch.cuda.empty_cache()
""",
        # out-of-memory recovery in an except handler
        """
import torch
for x, y in loader:
    try:
        loss = model(x).sum()
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        optimizer.zero_grad()
        torch.cuda.empty_cache()
        continue
    optimizer.step()
""",
        # once per model / fold: the loop runs a whole training loop
        """
import gc
import torch
for name in model_names:
    model = build(name)
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
    del model
    gc.collect()
    torch.cuda.empty_cache()
""",
        # throttled: every 100 steps (low confidence only)
        """
import torch
for step, (x, y) in enumerate(loader):
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        torch.cuda.empty_cache()
""",
        # gc.collect in a loop over files of a script that uses no deep-learning framework
        """
import gc
for path in batches:
    rows = load(path)
    gc.collect()
""",
        # probing batch sizes: cleanup after a guarded attempt that may run out of memory
        """
import torch
def fits(model, batch_size):
    try:
        model(torch.randn(batch_size, 3, 224, 224)).sum().backward()
        return True
    except torch.cuda.OutOfMemoryError:
        return False
    finally:
        torch.cuda.empty_cache()
for batch in (64, 32, 16, 8):
    if fits(model, batch):
        break
""",
        # LL107's recommended retry: the cache is cleared only after an out-of-memory error
        """
import torch
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

for batch in train_loader:
    train_step(model, batch, optimizer)

for x, y in train_loader:
    failure = None
    try:
        model(x).sum().backward()
    except RuntimeError as e:
        failure = e
    if failure is not None and "out of memory" in str(failure):
        torch.cuda.empty_cache()
    optimizer.step()
""",
        # a helper called once per epoch, not per step
        """
import torch
def end_of_epoch(model):
    torch.cuda.empty_cache()
for epoch in range(10):
    for x, y in loader:
        model(x).sum().backward()
    end_of_epoch(model)
""",
    )
    INVALID = (
        # an RL loop: the episode loop calls one training step, so act() runs every step
        """
import torch
policy = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters())
def act(obs):
    torch.cuda.empty_cache()  # expect: LL402
    with torch.no_grad():
        return int(policy(obs).argmax())
def update(states, returns):
    loss = -(torch.log_softmax(policy(states), dim=-1).max(-1).values * returns).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
for episode in range(10000):
    obs, done = env.reset(), False
    while not done:
        obs, done = env.step(act(obs))
    update(*rollout_batch())
""",
        """
import gc
import torch
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()  # expect: LL402
        gc.collect()  # expect: LL402
""",
        """
import torch
from torch.cuda import empty_cache
def train_step(model, batch, optimizer):
    loss = model(batch).sum()
    loss.backward()
    optimizer.step()
    empty_cache()  # expect: LL402
    return loss.item()

for batch in train_loader:
    train_step(model, batch, optimizer)
""",
        """
import torch
@torch.no_grad()
def evaluate(model, val_loader):
    for images, labels in val_loader:
        logits = model(images.cuda())
        torch.cuda.empty_cache()  # expect: LL402
""",
        # the flag's else branch is the normal path; a flag also computed from data is no error flag
        """
import torch
for x, y in train_loader:
    oom = False
    try:
        model(x).sum().backward()
    except torch.cuda.OutOfMemoryError:
        oom = True
    if oom:
        continue
    else:
        torch.cuda.empty_cache()  # expect: LL402
    big = x.numel() > 10_000
    try:
        optimizer.step()
    except RuntimeError:
        big = True
    if big:
        torch.cuda.empty_cache()  # expect: LL402
""",
        """
import gc
import pytorch_lightning as pl
class LitModel(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.model(batch).sum()
        gc.collect()  # expect: LL402
        return loss
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """`gc.collect()` (and `torch.cuda.empty_cache()`) after every step, vs not."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(ctx.device)
            ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.01)
            ctx.x = torch.randn(16, 32, device=ctx.device)
            ctx.y = torch.randint(0, 10, (16,), device=ctx.device)

        def _step(self, ctx):
            import torch.nn.functional as F
            ctx.optimizer.zero_grad()
            loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)
            loss.backward()
            ctx.optimizer.step()

        def leaky(self, ctx):
            import gc

            import torch
            self._step(ctx)
            torch.cuda.empty_cache()
            gc.collect()

        def fixed(self, ctx):
            self._step(ctx)


# --- detection ------------------------------------------------------------------------------------
_MEMORY_CHECK = re.compile(r"memory_allocated|memory_reserved|mem_get_info|max_memory|memory_usage|virtual_memory")


def is_throttled(test: cst.BaseExpression) -> bool:
    """``if step % N == 0`` (every N steps) or a memory-pressure check: runs now and then."""
    has_modulo = any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo) for n in walk(test))
    return has_modulo or any(_MEMORY_CHECK.search(name) for name in dotted_names_in(test))


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    targets = {GC_COLLECT, *EMPTY_CACHE}
    places = [
        place
        for place in facts.index.calls_named("empty_cache", "collect")
        if facts.imports.resolve(place.node.func) in targets  # type: ignore[attr-defined]
    ]
    if not places:
        return
    sites = call_graph(facts)
    uses_framework = facts.imports.imports_anything_from(*DL_FRAMEWORKS)
    for place in places:
        call = place.node
        is_gc = facts.imports.resolve(call.func) == GC_COLLECT  # type: ignore[attr-defined]
        if is_gc and not uses_framework:
            continue
        if place.in_recovery_code():
            continue
        found = _frequency(facts, place, sites)
        if found is None:
            continue
        confidence, where = found
        what = facts.describe(call)
        cost = (
            "a full collection walks every Python object and frees nothing still referenced"
            if is_gc
            else "it synchronises the device and hands cached blocks back to the driver, to be allocated "
            "again next step; it frees nothing a tensor still references"
        )
        yield Violation(
            node=call,
            message=f"'{what}' runs {where}: {cost}",
            confidence=confidence,
            statement=place.statement(),
        )


def _frequency(facts: ModuleFacts, place: Place, sites: CallGraph) -> tuple[Confidence, str] | None:
    """(confidence, where it runs) when the call runs once per training step, else None."""
    level, index = step_level(facts, place)
    if level in (Level.EPOCH, Level.OUTER):
        return None
    if level is not None:
        if any(is_throttled(test) for test in place.guards(after=index)):
            return Confidence.LOW, "in the loop now and then"
        loop = place.chain[index]
        if not _trains(facts, loop) and _deletes(loop):
            # `del out, batch; gc.collect()` per item of a heavy analysis loop: deliberate
            return Confidence.LOW, "on every iteration of the loop"
        return (Confidence.HIGH if level is Level.STEP else Confidence.MEDIUM), "on every step of the loop"
    info = place.function(facts)
    if info is None:
        return None
    throttled = any(is_throttled(test) for test in place.guards())
    if is_per_step_hook(info):
        return (Confidence.LOW if throttled else Confidence.MEDIUM), f"every step (in the per-batch hook '{info.name}')"
    for site in sites.places_of(info):
        site_level, site_index = step_level(facts, site)
        if site_level is Level.STEP:
            if throttled or any(is_throttled(test) for test in site.guards(after=site_index)):
                return Confidence.LOW, f"every step ('{info.name}' is called in a training loop)"
            return Confidence.MEDIUM, f"every step ('{info.name}' is called in a training loop)"
    return None


def _trains(facts: ModuleFacts, loop: cst.CSTNode) -> bool:
    info = facts.structure.loops.get(loop)
    return info is not None and (info.has_backward or info.has_optimizer_step)


def _deletes(loop: cst.CSTNode) -> bool:
    """The loop body drops its per-iteration objects with ``del``."""
    body = getattr(loop, "body", loop)
    return any(isinstance(node, cst.Del) for node in walk(body, into=not_into_scopes))
