"""LL402 empty-cache-in-loop: ``torch.cuda.empty_cache()`` / ``gc.collect()`` every training step.

This module also holds the small "where does this call run?" helpers that LL403-LL503 share: a
walk that keeps each node's ancestors, the loops and guards around a node in its own scope, how
often a loop runs (per step, per epoch, per fold...), and where a local function is called. They
belong in ``leaklint.analysis`` once the analysis grows a per-node context fact.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterator
from weakref import WeakKeyDictionary

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.walk import children, dotted_names_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

# ================================================================================================
# Shared helpers: where a node runs
# ================================================================================================
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_EPOCH_NAME = re.compile(r"epoch", re.IGNORECASE)
_STEP_COUNTER_NAME = re.compile(r"step|iter|batch", re.IGNORECASE)
_SIZE_NAME = re.compile(r"sizes?$", re.IGNORECASE)
#: Frameworks whose training loops make a per-step ``gc.collect()`` a real cost worth reporting.
DL_FRAMEWORKS = (
    "torch", "tensorflow", "keras", "tf_keras", "jax", "flax", "lightning", "pytorch_lightning",
    "transformers", "accelerate", "deepspeed", "paddle", "mxnet",
)
#: Framework hooks that run once per batch (Lightning modules, Keras / HF / Lightning callbacks).
PER_STEP_HOOK = re.compile(
    r"^(training_step|validation_step|test_step|predict_step|train_step"
    r"|on_(train_|validation_|test_|predict_)?batch_(start|begin|end)"
    r"|on_step_(begin|end)|on_(before|after)_backward|on_before_optimizer_step|on_before_zero_grad)$"
)


#: Nodes that never hold code below them (or only type hints and imports): not descended into.
_LEAF_TYPES = frozenset(
    {
        cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.FormattedStringText,
        cst.Import, cst.ImportFrom, cst.Annotation, cst.Pass, cst.Break, cst.Continue, cst.Ellipsis,
        cst.Comment, cst.Newline, cst.EmptyLine,
    }
)


def walk_with_ancestors(
    root: cst.CSTNode, wanted: Callable[[cst.CSTNode], bool]
) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]:
    """Every node ``wanted`` accepts, with its ancestors (outermost first), in source order."""
    path: list[cst.CSTNode] = []
    stack: list[tuple[cst.CSTNode, int]] = [(root, 0)]
    leaves = _LEAF_TYPES
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        if wanted(node):
            yield node, tuple(path)
        if type(node) in leaves:
            continue
        path.append(node)
        depth += 1
        stack.extend([(child, depth) for child in reversed(children(node))])


def _holds(parent: cst.CSTNode, child: cst.CSTNode, grandchild: cst.CSTNode | None) -> tuple[bool, bool]:
    """(``parent`` is a loop that runs ``child`` every iteration, ``parent`` is a scope whose body
    is ``child``). The ``iter`` of a ``for`` and its ``else`` run once; decorators and defaults of
    a ``def`` run in the enclosing scope."""
    if isinstance(parent, (cst.For, cst.While)):
        return child is parent.body, False
    if isinstance(parent, _SCOPES):
        return False, child is parent.body
    if isinstance(parent, _COMPREHENSIONS):
        if isinstance(child, cst.CompFor) and child is parent.for_in:
            return grandchild is not None and grandchild is not child.iter, False
        return True, False
    return False, False


@dataclass(frozen=True, eq=False)
class Place:
    """A node and its ancestors: the scope and the loops it runs in, the guards around it."""

    node: cst.CSTNode
    path: tuple[cst.CSTNode, ...]

    @cached_property
    def chain(self) -> tuple[cst.CSTNode, ...]:
        return self.path + (self.node,)

    @cached_property
    def scope_index(self) -> int:
        """Index in ``chain`` of the innermost def/lambda/class whose body holds the node, or -1."""
        chain = self.chain
        for index in range(len(chain) - 2, -1, -1):
            grandchild = chain[index + 2] if index + 2 < len(chain) else None
            if _holds(chain[index], chain[index + 1], grandchild)[1]:
                return index
        return -1

    @cached_property
    def scope(self) -> cst.CSTNode | None:
        return self.chain[self.scope_index] if self.scope_index >= 0 else None

    @cached_property
    def loops(self) -> tuple[int, ...]:
        """Indices in ``chain`` of the loops (outermost first) that run the node every iteration,
        within its own scope (an outer function's loop does not run a nested def's body)."""
        chain = self.chain
        found = []
        for index in range(self.scope_index + 1, len(chain) - 1):
            grandchild = chain[index + 2] if index + 2 < len(chain) else None
            if _holds(chain[index], chain[index + 1], grandchild)[0]:
                found.append(index)
        return tuple(found)

    def function(self, facts: ModuleFacts) -> FunctionInfo | None:
        scope = self.scope
        return facts.structure.functions.get(scope) if isinstance(scope, cst.FunctionDef) else None

    def guards(self, after: int = -1) -> list[cst.CSTNode]:
        """The ``if`` / ternary tests whose branch holds the node (below index ``after``)."""
        chain = self.chain
        tests = []
        for index in range(max(after, self.scope_index) + 1, len(chain) - 1):
            parent, child = chain[index], chain[index + 1]
            if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
                tests.append(parent.test)
        return tests

    def in_except_handler(self) -> bool:
        chain = self.chain
        return any(
            isinstance(chain[i], cst.ExceptHandler) and chain[i + 1] is chain[i].body
            for i in range(self.scope_index + 1, len(chain) - 1)
        )

    def in_oom_cleanup(self) -> bool:
        """In the ``finally`` of a ``try`` that handles running out of memory: recovery code."""
        chain = self.chain
        for i in range(self.scope_index + 1, len(chain) - 1):
            node = chain[i]
            if isinstance(node, cst.Try) and node.finalbody is not None and chain[i + 1] is node.finalbody:
                if any(_mentions_oom(handler) for handler in node.handlers):
                    return True
        return False

    def statement(self) -> cst.SimpleStatementLine | None:
        """The statement line holding the node (for suppression comments), if it is simple."""
        for node in reversed(self.path):
            if isinstance(node, cst.SimpleStatementLine):
                return node
            if isinstance(node, (cst.BaseCompoundStatement, *_SCOPES)):
                return None
        return None


_OOM_WORD = re.compile(r"out.of.memory|outofmemory|\boom\b|resourceexhausted", re.IGNORECASE)


def _mentions_oom(handler: cst.ExceptHandler) -> bool:
    """``except torch.cuda.OutOfMemoryError`` / ``if "out of memory" in str(e)``."""
    for node in walk(handler):
        if isinstance(node, cst.Name) and _OOM_WORD.search(node.value):
            return True
        if isinstance(node, cst.SimpleString) and _OOM_WORD.search(node.value):
            return True
    return False


class Level(enum.Enum):
    """How often the body of a loop runs, as far as the code shows."""

    STEP = "step"  # a training/evaluation step: backward, optimizer step, or a data loader
    WEAK_STEP = "weak-step"  # only a step/iteration counter name says so
    EPOCH = "epoch"  # once per epoch
    OUTER = "outer"  # around a step loop, but not named epoch: per fold, per model, per trial
    STRUCTURE = "structure"  # over layers, heads, files, configurations...


def _leaf_names(names: set[str]) -> set[str]:
    return {name.rsplit(".", 1)[-1] for name in names}


def _loop_names(loop: cst.CSTNode) -> set[str]:
    if isinstance(loop, cst.For):
        return _leaf_names(dotted_names_in(loop.iter) | set(bound_names(loop.target)))
    if isinstance(loop, cst.While):
        return _leaf_names(dotted_names_in(loop.test))
    if isinstance(loop, _COMPREHENSIONS):
        return _leaf_names(dotted_names_in(loop.for_in.iter) | set(bound_names(loop.for_in.target)))
    return set()


def loop_level(facts: ModuleFacts, loop: cst.CSTNode) -> Level:
    """Classify a loop by what it does first (backward, optimizer step, inner step loops) and
    only then by the names it iterates (``loader`` / ``epoch`` / ``step``)."""
    info = facts.structure.loops.get(loop)
    names = _loop_names(loop)
    data = isinstance(loop, (cst.For, *_COMPREHENSIONS)) and any(torch_api.DATA_SOURCE_NAME.search(n) for n in names)
    epoch = any(_EPOCH_NAME.search(n) for n in names)
    if info is not None:
        if info.contains_iteration_loop:
            return Level.EPOCH if epoch else Level.OUTER
        if info.has_backward or info.has_optimizer_step:
            return Level.STEP
    if data:
        return Level.STEP
    if epoch:
        return Level.EPOCH
    if any(_STEP_COUNTER_NAME.search(n) and not _SIZE_NAME.search(n) for n in names):
        return Level.WEAK_STEP
    return Level.STRUCTURE


def step_level(facts: ModuleFacts, place: Place) -> tuple[Level | None, int]:
    """The level of the innermost non-structure loop around ``place`` and its index in the chain
    (None, -1 when only structure loops, or none, run it)."""
    for index in reversed(place.loops):
        level = loop_level(facts, place.chain[index])
        if level is not Level.STRUCTURE:
            return level, index
    return None, -1


def is_per_step_hook(info: FunctionInfo) -> bool:
    """A method a framework calls once per batch: Lightning steps, Keras/HF/Lightning callbacks."""
    if info.cls is None or not PER_STEP_HOOK.match(info.name):
        return False
    return info.cls.is_lightning or any("Callback" in base for base in info.cls.base_names)


def callee_name(func: cst.BaseExpression) -> str | None:
    """The last name of a callee: ``f`` for ``f(...)``, ``a.b.f(...)``; None for ``g()(...)``."""
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


_INDEXED_TYPES = frozenset({cst.Call, cst.Assign, cst.AnnAssign, cst.FunctionDef})


@dataclass
class ModuleIndex:
    """One walk of a module, shared by the rules that need places with ancestors."""

    #: Calls by the callee's last name (``empty_cache`` for ``torch.cuda.empty_cache()``).
    calls: dict[str, list[Place]] = field(default_factory=dict)
    #: Decorated ``def`` statements, by each decorator's last name (``function`` for ``@tf.function``).
    definitions: dict[str, list[Place]] = field(default_factory=dict)
    #: Every assignment with a value (``Assign`` / ``AnnAssign``).
    assignments: list[Place] = field(default_factory=list)
    #: Every call with a named callee, in source order.
    ordered_calls: list[Place] = field(default_factory=list)

    @classmethod
    def build(cls, module: cst.Module) -> ModuleIndex:
        index = cls()
        indexed = _INDEXED_TYPES

        def wanted(node: cst.CSTNode) -> bool:
            return type(node) in indexed  # exact types: isinstance on libcst's ABCs is slow

        for node, path in walk_with_ancestors(module, wanted):
            place = Place(node, path)
            if isinstance(node, cst.Call):
                name = callee_name(node.func)
                if name is not None:
                    index.calls.setdefault(name, []).append(place)
                    index.ordered_calls.append(place)
            elif isinstance(node, cst.FunctionDef):
                if not node.decorators:
                    continue
                for decorator in node.decorators:
                    expr = decorator.decorator
                    name = callee_name(expr.func if isinstance(expr, cst.Call) else expr)
                    if name is not None:
                        index.definitions.setdefault(name, []).append(place)
            else:
                index.assignments.append(place)
        return index

    def calls_named(self, *names: str) -> list[Place]:
        return [place for name in names for place in self.calls.get(name, ())]


_INDEXES: WeakKeyDictionary[ModuleFacts, ModuleIndex] = WeakKeyDictionary()


def module_index(facts: ModuleFacts) -> ModuleIndex:
    """The index of ``facts.module``, built on first use and shared by every rule for this file."""
    index = _INDEXES.get(facts)
    if index is None:
        index = _INDEXES[facts] = ModuleIndex.build(facts.module)
    return index


class CallSites:
    """Direct calls of the file's own functions (``f(...)``, ``self.f(...)``), with ancestors."""

    def __init__(self, facts: ModuleFacts) -> None:
        self._index = module_index(facts)

    def of(self, info: FunctionInfo) -> list[Place]:
        """Where ``info`` is called: by bare name for functions, by ``self.name`` within its class."""
        sites = []
        for place in self._index.calls.get(info.name, ()):
            func = place.node.func  # type: ignore[attr-defined]
            by_self = isinstance(func, cst.Attribute)
            if by_self and not (isinstance(func.value, cst.Name) and func.value.value in ("self", "cls")):
                continue
            if info.is_method:
                if by_self and info.cls is not None and info.cls.node in place.path:
                    sites.append(place)
            elif not by_self:
                if info.parent is None or info.parent.node in place.path:
                    sites.append(place)
        return sites


def is_literal(node: cst.BaseExpression, *values: str) -> bool:
    """``True`` / ``False`` / ``None`` / ``0`` / ``1`` spelt literally."""
    if isinstance(node, cst.Name):
        return node.value in values
    if isinstance(node, cst.Integer):
        return node.value in values
    return False


def call_argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument passed at ``position`` or as ``keyword=``."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg.value
            continue
        if positional == position:
            return arg.value
        positional += 1
    return None


def _has_modulo(test: cst.BaseExpression) -> bool:
    return any(
        isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo) for n in walk(test)
    )


_MEMORY_CHECK = re.compile(r"memory_allocated|memory_reserved|mem_get_info|max_memory|memory_usage|virtual_memory")


def is_throttled(test: cst.BaseExpression) -> bool:
    """``if step % N == 0`` (every N steps) or a memory-pressure check: runs now and then."""
    return _has_modulo(test) or any(_MEMORY_CHECK.search(name) for name in dotted_names_in(test))


# ================================================================================================
# LL402
# ================================================================================================
EMPTY_CACHE = frozenset(
    {
        "torch.cuda.empty_cache",
        "torch.cuda.memory.empty_cache",
        "torch.mps.empty_cache",
        "torch.mps.memory.empty_cache",
        "torch.xpu.empty_cache",
        "torch.xpu.memory.empty_cache",
        "torch.accelerator.empty_cache",
        "torch.accelerator.memory.empty_cache",
    }
)
GC_COLLECT = "gc.collect"


class EmptyCacheInLoop(Rule):
    code = "LL402"
    name = "empty-cache-in-loop"
    severity = Severity.PERF
    summary = "torch.cuda.empty_cache() or gc.collect() runs every training step, slowing each step and freeing nothing that is still referenced."
    help = "drop the call, or run it once per epoch / after the loop; to fix a real leak, drop the reference that keeps the memory alive"
    docs = """
## What it finds
`torch.cuda.empty_cache()` (also `torch.mps.empty_cache()`, `torch.xpu.empty_cache()` and
`torch.accelerator.memory.empty_cache()`) or `gc.collect()` inside a loop that runs once per
training or evaluation step: a loop that calls `.backward()`, steps an optimizer or iterates a
data loader (high confidence), or a loop over a `step` / `iteration` / `batch` counter (medium).
Also such a call inside a function the same file calls from such a loop (a `train_step` helper),
and inside framework hooks that run once per batch (Lightning's `training_step`, a callback's
`on_train_batch_end`): medium confidence.

It stays quiet when the call runs once per epoch (in an epoch loop, outside its inner data loop),
once per fold or model (a loop around a whole training loop), after the loop, inside an `except`
handler, or in the `finally` of a `try` that handles out-of-memory errors (recovery code). Low
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

## Known false positives
Calling `empty_cache()` every step can be a deliberate trade when inputs change size every step
and fragmentation, not a leak, runs the device out of memory; prefer
`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, or throttle the call (`if step % 100 == 0`),
which this rule accepts. A loop is judged by what it does and by its names: a loop over
`batch_sizes` counts as a batch loop (medium confidence). Suppress a deliberate call with
`# noqa: LL402`.

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
- Runtime repro: `leaklint verify LL402` (the runtime verifier arrives in a later release).
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
        targets = {GC_COLLECT, *EMPTY_CACHE}
        places = [
            place
            for place in module_index(facts).calls_named("empty_cache", "collect")
            if facts.imports.resolve(place.node.func) in targets  # type: ignore[attr-defined]
        ]
        if not places:
            return
        sites = CallSites(facts)
        uses_framework = facts.imports.imports_anything_from(*DL_FRAMEWORKS)
        for place in places:
            call = place.node
            is_gc = facts.imports.resolve(call.func) == GC_COLLECT  # type: ignore[attr-defined]
            if is_gc and not uses_framework:
                continue
            if place.in_except_handler() or place.in_oom_cleanup():
                continue
            found = self._frequency(facts, place, sites)
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

    @staticmethod
    def _frequency(facts: ModuleFacts, place: Place, sites: CallSites) -> tuple[Confidence, str] | None:
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
        for site in sites.of(info):
            site_level, site_index = step_level(facts, site)
            if site_level in (Level.STEP, Level.WEAK_STEP):
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
