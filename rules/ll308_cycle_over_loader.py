"""LL308 cycle-over-loader: ``itertools.cycle`` over a data loader keeps every batch of its first
pass, to replay them, for as long as the cycle lives."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.places import Place
from leaklint.analysis.structure import ClassInfo
from leaklint.analysis.values import Kind, Role, Value
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import Replace, SuggestedFix, bare_code, module_level_imports
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation

#: The call this rule reports, by qualified name (imports and aliases resolved).
CYCLE = "itertools.cycle"
#: The identifiers a file must use for any expression of it to be known as a loader or a dataset.
LOADER_CLASS_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in torch_api.DATA_LOADER_CLASSES | torch_api.DATASET_BASES) | {"datasets"}


class CycleOverLoader(Rule):
    code = "LL308"
    name = "cycle-over-loader"
    severity = Severity.LEAK
    summary = (
        "itertools.cycle() over a data loader saves a copy of every batch it yields, so the whole first "
        "epoch stays in memory for as long as the cycle lives, and later passes replay the same batches."
    )
    help = (
        "iterate the loader again on each pass instead of caching it: a generator such as "
        "`def forever(loader): while True: yield from loader` keeps no batch after its step"
    )
    #: Every finding is a call of ``itertools.cycle`` (the file names both), over a loader or a
    #: dataset of a known class, or (low confidence) over an unknown iterable in a file that
    #: imports torch or a library built on it.
    needs = Names("cycle") & Names("itertools") & (Names(*torch_api.TORCH_ROOTS) | Names(*LOADER_CLASS_NAMES))
    #: Medium and high findings rest on a loader or dataset class the file names.
    needs_above_low = Names(*LOADER_CLASS_NAMES)
    fixable = True
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), from
    #: bench/measured.py: no finding on real code at the default confidence, so the leak benchmark decides.
    measured = Measured(realcode=(0, 0, 0), leaks=(2, 0))
    docs = """
## What it finds
A call of `itertools.cycle(x)` (also `from itertools import cycle`, under any alias) where `x` is
a data loader, or iterates one:

- a `torch.utils.data.DataLoader` (or a loader of torch_geometric, DGL, MONAI, torchdata, or a
  class of the file that derives from one), built in the function, the class (`self.loader`),
  the module, or kept on an object the file builds (`handlers.data_io`);
- a loader wrapped by `accelerator.prepare(...)` (also unpacked: `model, optimizer, loader =
  accelerator.prepare(model, optimizer, loader)`), Fabric's `setup_dataloaders`,
  `skip_first_batches`; or iterated by `iter(...)`, `enumerate(...)`, `zip(...)`, a progress
  bar or a generator expression;
- a parameter annotated as a `DataLoader`, or one that the calls of the function in the file
  pass a loader for; what a local function returns; an item of a list or dict of loaders the
  file builds (`loaders["train"]`, `for task, dl in loaders.items(): itertools.cycle(dl)`);
- a dataset of the file (a class deriving from torch's `Dataset` / `IterableDataset`) or of
  `torchvision.datasets`: its samples are kept the same way (medium confidence: what a sample is,
  its `__getitem__` decides).

Confidence is high for a loader, medium for a dataset, and low when nothing in the file says
what `x` is (a parameter that no call of the file passes, an attribute no method assigns, the
result of another package's function) in a file that imports torch or a library built on it.

It stays quiet for a cycle over something built in memory (a literal list or tuple, a `range`, a
list or dict comprehension, file names from `glob` / `os.listdir`, plotting colours, numbers,
tensors), over a list *of* loaders (round-robin over tasks keeps the loaders, not their batches),
for `next(itertools.cycle(loader))` (the cycle is dropped at once), and for a function of the
file that happens to be called `cycle` (the `def cycle(dl): while True: for d in dl: yield d` of
many diffusion repositories restarts the loader, it caches nothing).

## Why it matters
`itertools.cycle` is documented to make "an iterator returning elements from the iterable and
saving a copy of each": during the first pass it appends every element it yields to an internal
list, and once the iterable is exhausted it replays that list forever. Over a data loader the
elements are batches, so every batch of the first epoch stays referenced for as long as the
cycle object lives: host memory grows by one batch per step for a whole epoch (the full
dataset, decoded and augmented, when the loop runs that long), and with a loader that yields
device tensors (an `accelerator.prepare`d loader, a collate function that moves them) the GPU
memory grows until CUDA runs out. The replay is also a training bug: later passes repeat the
same batches in the same order with the same random augmentations, since the loader is never
iterated again (no reshuffle, no new crops).

## Example
```python
import itertools

loader = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
batches = itertools.cycle(loader)
for step in range(max_steps):
    batch = next(batches)
    ...
```

## Use instead
```python
def forever(loader):
    while True:
        yield from loader  # a new pass each time: reshuffled, nothing kept

batches = forever(loader)
for step in range(max_steps):
    batch = next(batches)
    ...
```
Or loop over epochs (`for epoch in ...: for batch in loader:`), or restart an iterator on
`StopIteration`.

## Fix safety
**Unsafe**, offered only when the cycled expression is the loader (or dataset) object itself
(a name, an attribute, an item of a container, a `DataLoader(...)` call), never an iterator over
one (`iter(loader)`, `enumerate(loader)`, a generator expression), which a second pass would
find exhausted. The fix replaces
`itertools.cycle(loader)` with `(batch for _loader in itertools.repeat(loader) for batch in
_loader)`, a generator that iterates the same loader again on every pass (`repeat` evaluates
`loader` once, where the cycle did). It changes what the program does: every pass reshuffles
and re-augments instead of replaying the first pass, a loader with worker processes starts them
again each pass, and a loader that yields nothing makes the generator spin forever where the
cycle raised `StopIteration`.

## Known false positives
A loader over a few small batches that the program means to replay (overfitting one batch while
debugging, a tiny support set), or a cycle that a bounded loop drops after a few steps
(`zip(range(30), itertools.cycle(loader))`): the memory is bounded by those batches. Suppress it
with `# noqa: LL308`.

Measured on bench/realcode (90 repositories, 1.34 million lines) and on the library code of
accelerate, lightning, peft, timm, torch_geometric, torchmetrics and trl: no finding at the
default confidence. At `--min-confidence low` there are two, both in peft's EVA initialisation
(`tuners/lora/eva.py`), which cycles the `dataloader` its users pass until the SVD of every
layer converges: true (each batch drawn stays referenced until the function returns), low
because no call in the file passes a loader. Not reported there: detectron2's round-robin
`itertools.cycle(iter(it).__next__ for it in iterables)` (bound methods), and the `cycle(dl)`
generators that denoising-diffusion-pytorch defines itself. On bench/leaks it finds both cases
of this leak and nothing else, and their fixed versions are silent.

Not seen: a loader that only another file shows to be one (a `build_loader(cfg)` of another
module, a `self.train_loader` a base class of another file sets) is reported at low confidence
only; a loader passed through `*args` or `**kwargs`, or kept in a container the file fills in a
way other than a literal, a comprehension, `c[key] = ...` or `c.append(...)`, is not known as one.

## References
- Python documentation, `itertools.cycle`: "Make an iterator returning elements from the
  iterable and saving a copy of each": https://docs.python.org/3/library/itertools.html#itertools.cycle
- pytorch, "Memory leak when using itertools.cycle" (memory grows with every element cycled, the
  answer being that cycle keeps them): https://github.com/pytorch/pytorch/issues/23900
- SSS-GS, "A problem: 62G RAM not enough" and its fix "Fix RAM leak caused by itertools.cycle in
  dataloader" (RAM grew linearly until the OS killed training):
  https://github.com/cgtuebingen/SSS-GS/issues/6, https://github.com/cgtuebingen/SSS-GS/pull/7
- neuralpredictors, "Cycle fix": the `LongCycler` over several data loaders replaced
  `itertools.cycle` with a restarting generator: https://github.com/sinzlab/neuralpredictors/pull/76
- nni, "Use of itertools.cycle(dataloader) causes transforms on dataset not working after first
  iteration" (the replay side of the same cache): https://github.com/microsoft/nni/issues/3428
- Runtime repro: `leaklint verify LL308` measures the leaky and the fixed loop body.
"""

    VALID = (
        # The diffusion repositories' own `cycle`: a generator that restarts the loader.
        """
import torch
from torch.utils.data import DataLoader

def cycle(dl):
    while True:
        for data in dl:
            yield data

class Trainer:
    def __init__(self, dataset, batch_size):
        dl = DataLoader(dataset, batch_size=batch_size, shuffle=True, pin_memory=True)
        self.dl = cycle(dl)

    def train(self, model, opt, steps):
        for _ in range(steps):
            data = next(self.dl).cuda()
            model(data).mean().backward()
            opt.step()
""",
        # In-memory things: literals, ranges, file names, colours, a list of loaders, one batch.
        """
import glob
import itertools
from itertools import cycle

import matplotlib.pyplot as plt
import torch
from torch.utils.data import DataLoader

colors = itertools.cycle(plt.rcParams["axes.prop_cycle"].by_key()["color"])
markers = cycle(["o", "s", "^"])
lrs = itertools.cycle(range(3))
files = itertools.cycle(sorted(glob.glob("shards/*.tar")))

def round_robin(task_sets, steps):
    loaders = [DataLoader(ds, batch_size=32, shuffle=True) for ds in task_sets]
    tasks = itertools.cycle(loaders)
    for _ in range(steps):
        loader = next(tasks)
    first = next(itertools.cycle(DataLoader(task_sets[0], batch_size=4)))
    return first
""",
        # detectron2's round-robin over the iterators' `__next__` methods.
        """
import itertools
import torch

def _roundrobin(*iterables):
    num_active = len(iterables)
    nexts = itertools.cycle(iter(it).__next__ for it in iterables)
    while num_active:
        try:
            for next in nexts:
                yield next()
        except StopIteration:
            num_active -= 1
            nexts = itertools.cycle(itertools.islice(nexts, num_active))
""",
        # A parameter that no call of the file passes: nothing says it is a loader (low
        # confidence, hidden by default); peft's EVA initialisation looks like this.
        """
import itertools

import torch

def initialise(model, dataloader, forward_fn, max_steps):
    batches = iter(itertools.cycle(dataloader))
    for _, inputs in zip(range(max_steps), batches):
        with torch.no_grad():
            forward_fn(model, inputs)
""",
        # A helper whose callers in the file pass literal lists.
        """
import itertools
import torch

def schedule(values, steps):
    it = itertools.cycle(values)
    return [next(it) for _ in range(steps)]

warmup = schedule([1e-4, 3e-4, 1e-3], 100)
""",
    )
    INVALID = (
        # An accelerate-prepared loader, unpacked from prepare().
        """
import itertools

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader

def train(model, train_set, max_steps):
    accelerator = Accelerator(mixed_precision="bf16")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    loader = DataLoader(train_set, batch_size=1, shuffle=True, num_workers=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    batches = itertools.cycle(loader)  # expect: LL308
    for step in range(max_steps):
        loss = model(**next(batches)).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
""",
        # A loader kept on an object of the file, cycled by name; and a semi-supervised zip.
        """
import itertools
from itertools import cycle as repeat_forever

from torch.utils.data import DataLoader

class Handlers:
    def __init__(self, net, loader):
        self.net = net
        self.data_io = loader

def prepare(net, dataset, train):
    loader = DataLoader(dataset, batch_size=16, shuffle=train, num_workers=4)
    handlers = Handlers(net, loader)
    handlers.data_io_iter = itertools.cycle(handlers.data_io)  # expect: LL308
    return handlers

def train_ssl(model, labelled_set, unlabelled_set):
    labelled = DataLoader(labelled_set, batch_size=64, shuffle=True)
    unlabelled = DataLoader(unlabelled_set, batch_size=448, shuffle=True)
    for (x, y), (u, _) in zip(repeat_forever(labelled), unlabelled):  # expect: LL308
        model(x, y, u)
""",
        # A helper every caller of the file passes a loader; a loader kept on self.
        """
import itertools

import torch
from torch.utils.data import DataLoader

def infinite(dl):
    return itertools.cycle(dl)  # expect: LL308

class Distiller:
    def __init__(self, dataset):
        self.loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=2)

    def fit(self, student, teacher, steps):
        it = iter(itertools.cycle(self.loader))  # expect: LL308
        for _ in range(steps):
            x, _ = next(it)
            with torch.no_grad():
                target = teacher(x)
            torch.nn.functional.mse_loss(student(x), target).backward()

def main(dataset):
    batches = infinite(DataLoader(dataset, batch_size=8))
""",
        # One endless iterator per task over a dict of loaders; a dataset of the file cycled
        # sample by sample (medium confidence: its __getitem__ decides what a sample is).
        """
import itertools

import torch
from torch.utils.data import DataLoader, Dataset

class Scans(Dataset):
    def __init__(self, paths):
        self.paths = paths
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, index):
        return torch.load(self.paths[index])

def multitask(model, task_sets, steps):
    loaders = {name: DataLoader(ds, batch_size=32, shuffle=True) for name, ds in task_sets.items()}
    streams = {name: itertools.cycle(dl) for name, dl in loaders.items()}  # expect: LL308
    for step in range(steps):
        for name, stream in streams.items():
            model(next(stream), task=name)

def calibrate(model, paths, steps):
    samples = itertools.cycle(Scans(paths))  # expect: LL308
    with torch.no_grad():
        for _ in range(steps):
            model(next(samples).unsqueeze(0))
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A step-based loop that draws each batch from ``itertools.cycle(loader)`` (every batch of
        the first pass stays referenced by the cycle) vs from a generator that iterates the
        loader again on every pass (nothing is kept after the step)."""

        def setup(self, ctx):
            import itertools

            import torch
            from torch.utils.data import DataLoader, Dataset

            class Images(Dataset):
                """A large dataset read lazily: each sample is made when asked for, as a decoded image would be."""

                def __init__(self, device):
                    self.device = device

                def __len__(self):
                    return 100_000

                def __getitem__(self, index):
                    g = torch.Generator().manual_seed(index)
                    return torch.randn(3, 64, 64, generator=g).to(self.device)

            def forever(loader):
                while True:
                    yield from loader

            loader = DataLoader(Images(ctx.device), batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(0))
            ctx.cycled = itertools.cycle(loader)  # noqa: LL308 (the leaky variant)
            ctx.restarted = forever(loader)

        def leaky(self, ctx):
            batch = next(ctx.cycled)
            float(batch.mean())

        def fixed(self, ctx):
            batch = next(ctx.restarted)
            float(batch.mean())


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file: one per ``itertools.cycle`` call over a loader."""
    imports_torch = facts.imports.imports_anything_from(*torch_api.TORCH_ROOTS)
    names = {"cycle", *facts.imports.locals_for(CYCLE)}
    for place in facts.index.calls_named(*sorted(names)):
        call = place.node
        if not isinstance(call, cst.Call) or facts.imports.resolve(call.func) != CYCLE or len(call.args) != 1:
            continue
        argument = call.args[0]
        if argument.star or argument.keyword is not None or _dropped_at_once(place):
            continue
        value = facts.value(argument.value)
        dataset = _dataset(value)
        if value.role is not Role.LOADER and not dataset and _known_otherwise(argument.value, value):
            continue
        what = facts.describe(argument.value)
        cycled = facts.describe(call)
        if value.role is Role.LOADER or dataset:
            items = "sample" if dataset else "batch"
            known = "a dataset" if dataset else "an iterator over a data loader" if value.iterator else "a data loader"
            message = (
                f"'{cycled}' saves a copy of every {items} that '{what}' ({known}) yields in its first pass: "
                f"they all stay in memory (on the GPU too, for device tensors) for as long as the cycle lives, and "
                f"later passes replay them in the same order with the same augmentations"
            )
            confidence = Confidence.MEDIUM if dataset else Confidence.HIGH
            fix = None if value.iterator else _restart_fix(facts, place, call, argument.value)
        else:
            if not imports_torch:
                continue
            message = (
                f"'{cycled}' saves a copy of every item that '{what}' yields in its first pass, to replay them: if "
                f"'{what}' is a data loader (nothing in this file says what it is), every batch of the first epoch "
                "stays in memory for as long as the cycle lives"
            )
            confidence = Confidence.LOW
            fix = None
        yield Violation(node=call, message=message, confidence=confidence, statement=place.statement(), fix=fix)


def _dataset(value: Value) -> bool:
    """A dataset: one of torch or torchvision, or an object of a class of the file that derives
    from torch's ``Dataset``: it yields samples."""
    if value.role is Role.DATASET:
        return True
    return value.role is Role.INSTANCE and isinstance(value.cls, ClassInfo) and _derives_from_dataset(value.cls)


def _derives_from_dataset(cls: ClassInfo, depth: int = 0) -> bool:
    if any(torch_api.is_dataset_class(base) for base in cls.qualified_bases):
        return True
    return depth < 8 and any(_derives_from_dataset(base, depth + 1) for base in cls.local_bases)


def _known_otherwise(expr: cst.BaseExpression, value: Value) -> bool:
    """The code shows what the cycled value is, and it is no loader: a literal or a comprehension
    built here, a number, a string, a tensor, a model, a list of loaders, what a generator
    expression makes item by item."""
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
        return True
    return value.role is not None or value.kind is not Kind.UNKNOWN or value.items is not None or value.fields is not None or value.element is not None


def _dropped_at_once(place: Place) -> bool:
    """``next(itertools.cycle(loader))``: the cycle is dropped as soon as it yields its first item."""
    path = place.path
    if len(path) < 2 or not isinstance(path[-1], cst.Arg):
        return False
    outer = path[-2]
    return isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name) and outer.func.value == "next"


def _restart_fix(facts: ModuleFacts, place: Place, call: cst.Call, loader: cst.BaseExpression) -> SuggestedFix | None:
    """``itertools.cycle(loader)`` → ``(batch for _loader in itertools.repeat(loader) for batch in
    _loader)``, spelling ``repeat`` the way the file already reaches itertools."""
    repeat, imports = _repeat_reference(facts, place, call)
    if repeat is None:
        return None
    code = f"(batch for _loader in {repeat}({bare_code(facts.module, loader)}) for batch in _loader)"
    return SuggestedFix(
        "iterate the loader again on every pass instead of caching its batches",
        Applicability.UNSAFE,
        (Replace(call, code),),
        imports,
    )


def _repeat_reference(facts: ModuleFacts, place: Place, call: cst.Call) -> tuple[str | None, tuple[str, ...]]:
    """How to write ``itertools.repeat`` at ``call``: through the module the call already names
    (``it.cycle`` → ``it.repeat``), a module-level import of itertools or of ``repeat``, or a new
    ``import itertools`` when nothing else binds that name there."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return f"{facts.module.code_for_node(func.value)}.repeat", ()
    scope = place.scope
    bound = module_level_imports(facts.module)
    for local, target in sorted(bound.items()):
        if target == "itertools.repeat" and not facts.imports.bound_in(local, scope):
            return local, ()
    for local, target in sorted(bound.items()):
        if target == "itertools" and not facts.imports.bound_in(local, scope):
            return f"{local}.repeat", ()
    if "itertools" in bound or facts.imports.bound_in("itertools", scope):
        return None, ()
    return "itertools.repeat", ("itertools",)
