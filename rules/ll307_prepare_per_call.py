"""LL307 prepare-per-call: ``accelerator.prepare(...)`` on every iteration of a loop or every call
of a function that runs many times, on an Accelerator that outlives them: it keeps every object it
prepared."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis import percall_api
from leaklint.analysis.accelerators import argument_for_parameter, is_accelerator
from leaklint.analysis.calls import call_graph
from leaklint.analysis.device import is_hf_trainer
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.heavy import built_here
from leaklint.analysis.names import dotted_name, dotted_names_in
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import FEW_ITERATIONS, repeated_functions
from leaklint.analysis.structure import FunctionInfo, LoopInfo, bound_names
from leaklint.analysis.syntax import is_literal
from leaklint.analysis.values import Role
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation

#: A DataLoader: with ``persistent_workers`` its worker processes live as long as it does.
_DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


class PreparePerCall(Rule):
    code = "LL307"
    name = "prepare-per-call"
    severity = Severity.LEAK
    summary = (
        "accelerator.prepare() runs on every iteration of a loop or every call of a function that runs many "
        "times, and the Accelerator keeps every model, optimizer and data loader it ever prepared."
    )
    help = (
        "prepare what lasts once, outside the loop (and reuse a prepared eval loader), or call "
        "accelerator.free_memory() before preparing the next run's objects"
    )
    #: Every finding calls a prepare method on an Accelerator of accelerate, or on the
    #: ``self.accelerator`` of a transformers/TRL trainer: the file imports one of them.
    needs = Names(*percall_api.PREPARE_METHODS) & Names(*percall_api.ACCELERATOR_PACKAGES)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), from
    #: bench/measured.py (stop 28): no finding on real code, so the leak benchmark decides.
    measured = Measured(realcode=(0, 0, 0), leaks=(6, 0))
    docs = """
## What it finds
A call of `accelerator.prepare(...)` (or `prepare_model`, `prepare_optimizer`,
`prepare_data_loader`, `prepare_scheduler`) on an accelerate `Accelerator` (built with
`Accelerator(...)` in the file, handed to the function by its callers, or the `self.accelerator`
of a transformers / TRL `Trainer` subclass) that runs again and again while the Accelerator stays
the same:

- inside a loop that is not bounded by a few literal iterations (an epoch loop, a loop over runs or
  folds), with the Accelerator built before the loop;
- or in a function that runs many times (called from a loop, an Optuna objective, a framework hook,
  an override of a `Trainer` method the trainer calls at every evaluation such as
  `get_eval_dataloader`), with the Accelerator coming from outside the call.

It stays quiet when `accelerator.free_memory()` (or its alias `clear()`) runs in the same loop or
function, or in the function that calls it: that drops the Accelerator's references; and when the
function keeps what it prepares on `self` and hands it back on later calls (a dict looked up by
key, also through a local name for it, `cache = self.__dict__.setdefault("_loaders", {})`; or an
attribute tested by a guard that returns early, `if getattr(self, "_eval_loader", None) is not
None: return ...`): a `prepare` after that guard runs once. One inside the guard (the cached
loader prepared again at every call) is reported.

Confidence is high when a model or an optimizer prepared was built in that very iteration or call
(its parameters and states pile up), or a `DataLoader` with persistent workers is prepared again
(each prepared copy keeps its own worker processes); medium when only other objects built there
(a plain `DataLoader`, a scheduler) or the same objects prepared again pile up, once per step,
epoch or call (a loop over a counter, `range(epochs)`, a `while` loop, a loop over the data);
low for those in a loop over a list of the program's own items (the concepts of a DreamBooth run,
a few configurations, `range(len(concepts))`), a handful of light objects.

The finding points at the `prepare` call, or, when a prepared `DataLoader` with
`persistent_workers=` was built there, at that `DataLoader(...)`: its worker processes are what
piles up, and building it once is the fix.

## Why it matters
`Accelerator.prepare` wraps each object (a model for mixed precision or DDP, an optimizer in an
`AcceleratedOptimizer`, a data loader in a sharding `DataLoaderShard`) and appends the result to
the Accelerator's own lists, which only `free_memory()` empties. Prepared once per run this is
what it is for; prepared per epoch, per fold, per trial or per evaluation, every earlier object
stays referenced: each fine-tuning run's model and optimizer states stay on the GPU, each epoch's
data loader keeps its dataset (device tensors cached in it included), each evaluation's loader
with persistent workers keeps its worker processes until the file descriptors or the host memory
run out. `del model` and `gc.collect()` cannot free what the Accelerator still holds.

## Example
```python
from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")

def finetune(dataset):
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    ...

for round_ in range(10):
    finetune(pseudo_labelled(round_))
```

## Use instead
```python
def finetune(dataset):
    accelerator.free_memory()  # drop the previous run's model, optimizer and loader
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    ...
```
Prepare the model and optimizer once, before the epoch loop; build and prepare an evaluation
loader once and reuse it; or start each run with `accelerator.free_memory()`.

## Fix safety
No automatic fix: whether to move the `prepare` out of the loop, to reuse a prepared loader or to
free the Accelerator's references first depends on what the rest of the run still uses (a
`free_memory()` also forgets the objects of the current run).

## Known false positives
On bench/realcode (over a hundred files calling `accelerator.prepare`) it reports nothing at the
default confidence: every `prepare` there runs once per run, or once per
concept of a DreamBooth prior-preservation step (two diffusers examples prepare a loader of prompt
strings per concept: low confidence, hidden by default). On bench/leaks, at first, 5 of its 6 findings were on
marked lines. A sixth was in the fixed version of the DreamBooth case, which still prepared a new
`DataLoader` every epoch over a dataset of latents it cached on the device that epoch: the
Accelerator keeps each of them (its `_dataloaders` list), so the finding was true and the fixed
version was corrected (bench/leaks/HELDOUT.md); all its findings there are on marked lines now, which puts
the rule on by default. A loop that re-prepares on purpose with a bounded, small
number of iterations written as literals (`for stage in ("warmup", "main"):`) is not reported; one
bounded by a variable is. Accelerators reached through other objects (`self.trainer.accelerator`)
are not followed.

On the library code of accelerate, lightning, peft, trl, torchmetrics, torch_geometric and timm it
first made 3 findings, all false, in accelerate's test scripts: a setup helper that prepares a
model and a loader for the Accelerator its caller builds afresh on each call (`accelerator =
Accelerator(dataloader_config=...)` in a test run once per configuration, from loops over
`[True, False]`). A function whose every caller in the file passes an Accelerator built for that
call (or written as `Accelerator(...)` in the argument) never sees the same one twice, and a
function called from a loop of a few literal iterations does not run "every step": no finding.

## References
- "Add warning not to reuse `Accelerator`": training several models with one Accelerator leaks the
  old optimizers' GPU memory: https://github.com/huggingface/accelerate/issues/84
- accelerate, "RAM leakage" when preparing a model and optimizer several times in one process, and
  the fix that makes `free_memory()` release them: https://github.com/huggingface/accelerate/issues/2715,
  https://github.com/huggingface/accelerate/pull/2716
- transformers, "Fix eval thread fork bomb": a new data loader prepared at every evaluation with
  persistent workers: https://github.com/huggingface/transformers/pull/39717 (report:
  https://github.com/huggingface/transformers/issues/28469)
- sd_dreambooth_extension, "Fix mem leak": re-preparing the UNet, optimizer and loader every epoch
  leaked about 4 MB of VRAM per epoch: https://github.com/d8ahazard/sd_dreambooth_extension/pull/598
- Runtime repro: `leaklint verify LL307` measures the leaky and the fixed loop body.
"""

    VALID = (
        # a Trainer override that caches its prepared eval loader by key in a dict kept on the
        # object, and returns it from the cache on later evaluations
        """
from torch.utils.data import DataLoader
from transformers import Trainer
class CachedEvalTrainer(Trainer):
    def get_eval_dataloader(self, eval_dataset=None):
        cache = self.__dict__.setdefault("_eval_loaders", {})
        key = "eval" if eval_dataset is None else id(eval_dataset)
        if key in cache:
            return cache[key]
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        loader = DataLoader(dataset, batch_size=self.args.eval_batch_size, num_workers=4, persistent_workers=True)
        loader = self.accelerator.prepare(loader)
        cache[key] = loader
        return loader
""",
        # Prepared once; each run starts by dropping the previous run's references.
        """
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader

accelerator = Accelerator()

def train(model, optimizer, loader, epochs):
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        for x, y in loader:
            accelerator.backward(torch.nn.functional.mse_loss(model(x), y))
            optimizer.step()
            optimizer.zero_grad()

def try_batch_size(dataset, batch_size):
    accelerator.free_memory()
    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(dataset, batch_size=batch_size)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    return model

for size in (256, 128, 64):
    try_batch_size(None, size)
""",
        # A new Accelerator per run takes the old lists with it; a loop over two literal stages.
        """
import torch
from accelerate import Accelerator

def run(dataset, seed):
    accelerator = Accelerator()
    model = torch.nn.Linear(16, 1)
    model = accelerator.prepare(model)
    return model

def main(datasets):
    for seed, dataset in enumerate(datasets):
        run(dataset, seed)
    accelerator = Accelerator()
    for stage in ("warmup", "main"):
        model = accelerator.prepare(torch.nn.Linear(4, 4))
""",
        # A loader of class prompts prepared once per concept of a DreamBooth run (a handful of
        # light objects: low confidence, hidden by default).
        """
import torch
from accelerate import Accelerator

def generate_class_images(args, pipeline, prompt_dataset):
    accelerator = Accelerator()
    for i in range(len(args.class_data_dir)):
        loader = torch.utils.data.DataLoader(prompt_dataset(args.class_prompt[i]), batch_size=4)
        loader = accelerator.prepare(loader)
        for example in loader:
            pipeline(example["prompt"])
""",
        # The prepared evaluation loader kept on the trainer and handed back at later evaluations
        # (transformers' own fix, huggingface/transformers#39717).
        """
from torch.utils.data import DataLoader
from transformers import Trainer

class CachedEvalTrainer(Trainer):
    def get_eval_dataloader(self, eval_dataset=None):
        if getattr(self, "_eval_loader", None) is not None:
            return self._eval_loader
        loader = DataLoader(eval_dataset or self.eval_dataset, batch_size=64, num_workers=4, persistent_workers=True)
        loader = self.accelerator.prepare(loader)
        self._eval_loader = loader
        return loader
""",
        # A new Accelerator per call of run(), which hands it to the helper that prepares; the
        # configurations are a few literals or a list (accelerate's test_sync.py, test_metrics.py).
        """
from accelerate import Accelerator
from torch.utils.data import DataLoader

def setup(accelerator, model):
    loader = DataLoader(list(range(8)), batch_size=2)
    return accelerator.prepare(model, loader)

def run(model, flag):
    accelerator = Accelerator(split_batches=flag)
    model, loader = setup(accelerator, model)
    for batch in loader:
        accelerator.backward(model(batch).sum())

def main(model, flags):
    for split in [True, False]:
        for dispatch in [True, False]:
            run(model, split)
    for flag in flags:
        run(model, flag)
    for flag in flags:
        setup(Accelerator(), model)
""",
    )
    INVALID = (
        # a copied dict of loader settings checked by an early return is not a cache of loaders
        """
import torch
from torch.utils.data import DataLoader
from accelerate import Accelerator

class Runner:
    def __init__(self, model, loader_kwargs):
        self.accelerator = Accelerator()
        self.model = model
        self.loader_kwargs = loader_kwargs

    def evaluate(self, dataset):
        kwargs = dict(self.loader_kwargs)
        kwargs["shuffle"] = False
        if kwargs.get("batch_size", 0) == 0:
            return None
        loader = self.accelerator.prepare(DataLoader(dataset, **kwargs))  # expect: LL307
        total = 0.0
        with torch.no_grad():
            for x, y in loader:
                total += torch.nn.functional.cross_entropy(self.model(x), y).item()
        return total

    def fit(self, train_ds, val_ds, epochs):
        for epoch in range(epochs):
            print(epoch, self.evaluate(val_ds))
""",
        # The same helper, but one Accelerator built before the loop over runs.
        """
from accelerate import Accelerator
from torch.utils.data import DataLoader

def setup(accelerator, model):
    loader = DataLoader(list(range(8)), batch_size=2)
    return accelerator.prepare(model, loader)  # expect: LL307

def run(model, accelerator):
    model, loader = setup(accelerator, model)
    for batch in loader:
        accelerator.backward(model(batch).sum())

def main(model, flags):
    accelerator = Accelerator()
    for flag in flags:
        run(model, accelerator)
""",
        """
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification

def finetune(accelerator, dataset):
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer = accelerator.prepare(model, optimizer)  # expect: LL307
    return model

def main(rounds):
    accelerator = Accelerator(mixed_precision="fp16")
    for dataset in rounds:
        finetune(accelerator, dataset)
""",
        """
from accelerate import Accelerator
from torch.utils.data import DataLoader

def train(unet, optimizer, images, encode, epochs):
    accelerator = Accelerator()
    for epoch in range(epochs):
        loader = DataLoader(encode(images), batch_size=1, shuffle=True)
        unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)  # expect: LL307
        for batch in loader:
            pass
""",
        # A Trainer override called at every evaluation: the persistent workers pile up.
        """
from torch.utils.data import DataLoader
from transformers import Trainer

class GroupedTrainer(Trainer):
    def get_eval_dataloader(self, eval_dataset=None):
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        loader = DataLoader(dataset, batch_size=64, num_workers=4, persistent_workers=True)  # expect: LL307
        return self.accelerator.prepare(loader)
""",
        # The loader is kept, but unprepared: every evaluation wraps it again.
        """
from torch.utils.data import DataLoader
from transformers import Trainer

class CachedEvalTrainer(Trainer):
    def get_eval_dataloader(self, eval_dataset=None):
        if getattr(self, "_eval_loader", None) is not None:
            return self.accelerator.prepare(self._eval_loader)  # expect: LL307
        loader = DataLoader(eval_dataset or self.eval_dataset, batch_size=64, num_workers=4, persistent_workers=True)
        self._eval_loader = loader
        return self.accelerator.prepare(loader)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """What ``Accelerator.prepare`` does to its lists, in plain torch: each run's model and
        optimizer are appended to a registry that outlives the run (the Accelerator's ``_models``
        and ``_optimizers``), vs a registry emptied before each run (``free_memory()``)."""

        def setup(self, ctx):
            import torch

            torch.manual_seed(0)
            ctx.x = torch.randn(32, 256, device=ctx.device)
            ctx.models, ctx.optimizers = [], []

        def _run(self, ctx):
            import torch

            model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256)).to(ctx.device)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            ctx.models.append(model)  # accelerator.prepare(model, optimizer)
            ctx.optimizers.append(optimizer)
            model(ctx.x).pow(2).mean().backward()
            optimizer.step()

        def leaky(self, ctx):
            self._run(ctx)

        def fixed(self, ctx):
            ctx.models.clear()  # accelerator.free_memory()
            ctx.optimizers.clear()
            self._run(ctx)


# --- detection ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Repeat:
    """Why a ``prepare`` call runs again and again with the same Accelerator."""

    reason: str
    #: The loop that repeats it (None: the function does).
    loop: LoopInfo | None


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file: one per repeated ``prepare`` call."""
    facts_by_call = facts.derived(_statements_by_call)
    for place in facts.index.calls_named(*percall_api.PREPARE_METHODS):
        call = place.node
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            continue
        fact = facts_by_call.get(call)
        if fact is None:
            continue
        function = fact.function
        receiver = call.func.value
        name = dotted_name(receiver)
        if name is None or not is_accelerator(receiver, function, facts):
            continue
        repeat = _repeat(fact, name, facts)
        if repeat is None or _released(name, function, repeat, facts) or _memoised(function, facts) or _after_cache_guard(fact, facts):
            continue
        built = _built_per_repeat(call, function, repeat, facts)
        node, statement = fact.node, fact.line or fact.node
        loader = next((value for value in built if _persistent_loader(value, facts)), None)
        if loader is not None:
            loader_fact = _statement_holding(loader, function, facts)
            if loader_fact is not None:
                node, statement = loader_fact.node, loader_fact.line or loader_fact.node
        what = facts.describe(call)
        if not built and any(_persistent_loader(value, facts) for value in _bound_values(call, function, facts)):
            message = (
                f"'{what}' runs {repeat.reason} with the same Accelerator and the same DataLoader: each call wraps "
                "it in a new prepared loader with its own persistent worker processes, and the Accelerator keeps "
                "every one of them until free_memory()"
            )
            yield Violation(node=node, message=message, confidence=Confidence.HIGH, statement=statement)
            continue
        # A model or an optimizer (parameters, states) or live worker processes are heavy whatever
        # repeats them; loaders and re-wrapped objects pile up with every step, epoch or call, and
        # a loop over a list of items of the program (concepts, configurations, the indices of a
        # list) is a handful.
        per_step = repeat.loop is None or _counts_steps(repeat.loop, facts)
        kinds = list(dict.fromkeys(_kind(value, function, facts) for value in built))
        if built:
            message = (
                f"'{what}' runs {repeat.reason} with the same Accelerator, which keeps a reference to everything it "
                f"prepares until free_memory(): {'a new ' + ', a new '.join(kinds)} built each time stays alive, "
                "with its memory" + (" and its persistent worker processes" if loader is not None else "")
            )
            heavy = loader is not None or "model" in kinds or "optimizer" in kinds
            confidence = Confidence.HIGH if heavy else Confidence.MEDIUM if per_step else Confidence.LOW
        else:
            message = (
                f"'{what}' runs {repeat.reason} with the same Accelerator: each call wraps the same objects again "
                "and adds another reference to the Accelerator's lists, which only free_memory() empties"
            )
            confidence = Confidence.MEDIUM if per_step else Confidence.LOW
        yield Violation(node=node, message=message, confidence=confidence, statement=statement)


def _statements_by_call(facts: ModuleFacts) -> dict[cst.Call, StatementFact]:
    return {call: fact for call, fact in facts.index.statement_calls}


def _repeat(fact: StatementFact, name: str, facts: ModuleFacts, depth: int = 0) -> _Repeat | None:
    """Why the statement runs many times with the same ``name``: a loop around it that does not
    rebind ``name`` (and is not bounded by a few literal iterations), or a function that runs many
    times and does not bind ``name`` itself, nor gets it from callers that build a new one for
    each call."""
    for loop in reversed(fact.loops):
        if loop.at_most is not None and loop.at_most <= FEW_ITERATIONS:
            continue
        if _binds_in(facts.index.statements_in_loop(loop.node), name):
            return None  # a new Accelerator every iteration
        line = facts.line_of(loop.node)
        return _Repeat(f"on every iteration of the loop at line {line}" if line is not None else "on every iteration of a loop", loop)
    function = fact.function
    if _binds_in(facts.index.statements_of(function), name):
        return None  # the function makes its own Accelerator
    if depth < _CALLER_DEPTH and _fresh_at_every_call(function, name, facts, depth):
        return None  # each call gets an Accelerator its caller built for it
    cls = function.cls
    if cls is not None and function.name in percall_api.HF_TRAINER_PER_EVALUATION and is_hf_trainer(cls, facts.imports):
        return _Repeat(f"in '{function.name}', which the Trainer calls at every evaluation,", None)
    reason = repeated_functions(facts).get(function)
    if reason is None:
        return None
    return _Repeat(f"on every call of '{function.name}' ({reason})", None)


#: How many callers up :func:`_fresh_at_every_call` follows an Accelerator handed down.
_CALLER_DEPTH = 3


def _fresh_at_every_call(function: FunctionInfo, param: str, facts: ModuleFacts, depth: int) -> bool:
    """Every call of ``function`` in the file passes, for ``param``, an Accelerator that does not
    repeat at that call: one the caller builds for this call (``accelerator = Accelerator(...)``
    in a caller run once per configuration), or ``Accelerator(...)`` written as the argument. A
    function that runs many times only because such callers do never sees the same Accelerator
    twice."""
    if param not in function.params:
        return False
    sites = call_graph(facts).sites_of(function)
    if not sites:
        return False
    for call, site in sites:
        argument = argument_for_parameter(call, function, param)
        if argument is None:
            return False
        if isinstance(argument, cst.Call) and facts.imports.resolve(argument.func) in percall_api.ACCELERATOR_CLASSES:
            continue
        passed = dotted_name(argument)
        if passed is None or _repeat(site, passed, facts, depth + 1) is not None:
            return False
    return True


def _binds_in(statements: list[StatementFact], name: str) -> bool:
    for fact in statements:
        node = fact.node
        if isinstance(node, cst.Assign) and any(name in bound_names(target.target) for target in node.targets):
            return True
        if isinstance(node, (cst.AnnAssign, cst.AugAssign)) and name in bound_names(node.target):
            return True
    return False


def _released(name: str, function: FunctionInfo, repeat: _Repeat, facts: ModuleFacts) -> bool:
    """``name.free_memory()`` (or ``.clear()``) runs in the repeating loop, in the function, or in a
    function that calls it (before each run)."""
    scopes = [function] + [fact.function for _, fact in call_graph(facts).sites_of(function)]
    for scope in scopes:
        statements = facts.index.statements_of(scope)
        if repeat.loop is not None and scope is function:
            statements = facts.index.statements_in_loop(repeat.loop.node)
        for fact in statements:
            for call in calls_in(fact.node):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in percall_api.ACCELERATOR_RELEASE_METHODS:
                    owner = dotted_name(func.value)
                    if owner is not None and owner.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1]:
                        return True
    return False


def _kept_on_self(value: cst.BaseExpression) -> bool:
    """``self._loaders`` or ``self.__dict__.setdefault(...)``: the container itself, kept on the
    object (not a copy of it such as ``dict(self.loader_kwargs)``)."""
    if isinstance(value, cst.Call):
        value = value.func
    name = dotted_name(value)
    return name is not None and name.startswith("self.")


def _memoised(function: FunctionInfo, facts: ModuleFacts) -> bool:
    """The function keeps what it builds in a container on ``self`` that it also looks up
    (``if key in self._eval_loaders: return self._eval_loaders[key]`` ... ``self._eval_loaders[key]
    = loader``), also through a local name for that container (``cache =
    self.__dict__.setdefault("_loaders", {})``): it prepares each key's object once and hands the
    same one back afterwards."""
    stored: set[str] = set()
    aliases: set[str] = set()
    for fact in facts.index.statements_of(function):
        node = fact.node
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Subscript):
                    container = dotted_name(target.target.value)
                    if container is not None and (container.startswith("self.") or container in aliases):
                        stored.add(container)
                elif isinstance(target.target, cst.Name) and _kept_on_self(node.value):
                    aliases.add(target.target.value)
    if not stored or function.node is None:
        return False
    for current in walk(function.node.body, into=not_into_scopes):
        if isinstance(current, cst.Comparison) and any(
            isinstance(target.operator, (cst.In, cst.NotIn)) and dotted_name(target.comparator) in stored for target in current.comparisons
        ):
            return True
        if (
            isinstance(current, cst.Call)
            and isinstance(current.func, cst.Attribute)
            and current.func.attr.value == "get"
            and dotted_name(current.func.value) in stored
        ):
            return True
    return False


#: Calls whose result counts iterations (an epoch or step counter), unless counting a list's items.
_COUNTERS = frozenset({"range", "trange", "itertools.count", "tqdm.trange", "tqdm.auto.trange"})
#: Calls that wrap an iterable without changing what it runs over.
_WRAPPERS = frozenset({"enumerate", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "zip"})


def _counts_steps(loop: LoopInfo, facts: ModuleFacts) -> bool:
    """The loop runs once per step or epoch: a ``while`` loop, a loop over the data, or a ``for``
    over a counter (``range(epochs)``) that is not the indices of a list (``range(len(items))``)."""
    node = loop.node
    if isinstance(node, cst.While) or loop.iterates_data:
        return True
    if not isinstance(node, cst.For):
        return False
    header: cst.BaseExpression = node.iter
    while isinstance(header, cst.Call) and header.args and (facts.imports.resolve(header.func) or dotted_name(header.func)) in _WRAPPERS:
        header = header.args[0].value
    if not isinstance(header, cst.Call) or (facts.imports.resolve(header.func) or dotted_name(header.func)) not in _COUNTERS:
        return False
    first = header.args[0].value if header.args else None
    return not (isinstance(first, cst.Call) and dotted_name(first.func) == "len")


def _after_cache_guard(fact: StatementFact, facts: ModuleFacts) -> bool:
    """The statement comes after a guard that returns what an attribute on ``self`` caches
    (``if getattr(self, "_loader", None) is not None: return ...``, ``if self._loader:``,
    ``if hasattr(self, "_loader"): ...``), in a function that assigns that attribute: it runs once,
    to fill the cache, not on every call. A ``prepare`` inside the guard itself runs every call."""
    function = fact.function
    node = function.node
    if node is None:
        return False
    cached = {
        target
        for other in facts.index.statements_of(function)
        if isinstance(other.node, cst.Assign)
        for assign in other.node.targets
        if isinstance(assign.target, cst.Attribute) and (target := dotted_name(assign.target)) is not None and target.startswith("self.")
    }
    if not cached:
        return False
    statement = fact.line or fact.node
    for line in node.body.body:
        if any(part is statement or part is fact.node for part in walk(line)):
            return False  # reached the statement (inside a guard or not) before any guard that ends above it
        if isinstance(line, cst.If) and _guard_reads(line.test) & cached and any(isinstance(part, cst.Return) for part in walk(line.body)):
            return True
    return False


def _guard_reads(test: cst.BaseExpression) -> set[str]:
    """The attributes of ``self`` a guard's test reads, also through ``getattr(self, "x", ...)`` and
    ``hasattr(self, "x")``."""
    found = {name for name in dotted_names_in(test) if name.startswith("self.")}
    for current in walk(test):
        if isinstance(current, cst.Call) and dotted_name(current.func) in ("getattr", "hasattr") and len(current.args) >= 2:
            owner, attribute = current.args[0].value, current.args[1].value
            if dotted_name(owner) == "self" and isinstance(attribute, cst.SimpleString):
                found.add(f"self.{attribute.evaluated_value}")
    return found


def _built_per_repeat(call: cst.Call, function: FunctionInfo, repeat: _Repeat, facts: ModuleFacts) -> list[cst.BaseExpression]:
    """The objects built in the repeating iteration or call that ``call`` prepares: calls written
    as arguments, and what the names passed were bound to there (``model = build()``,
    ``loader = DataLoader(...)``), not what the Accelerator itself returned."""
    region = facts.index.statements_in_loop(repeat.loop.node) if repeat.loop is not None else facts.index.statements_of(function)
    built: list[cst.BaseExpression] = []
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Call):
            built.append(value)
            continue
        name = dotted_name(value)
        if name is None or "." in name:
            continue  # self._loader: one object kept across calls, not a new one each time
        for fact in region:
            node = fact.node
            if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
                continue
            if not any(name in bound_names(target.target) for target in node.targets):
                continue
            if _is_prepare(node.value) or len(node.targets) != 1 or not isinstance(node.targets[0].target, (cst.Name, cst.Attribute)):
                continue  # model, optimizer = accelerator.prepare(...): the wrapped object, not a new one
            built.append(node.value)
    return built


def _bound_values(call: cst.Call, function: FunctionInfo, facts: ModuleFacts) -> list[cst.BaseExpression]:
    """What the names ``call`` prepares are bound to anywhere (in the function, its class, the module)."""
    values: list[cst.BaseExpression] = []
    for arg in call.args:
        name = dotted_name(arg.value)
        if name is not None:
            values.extend(facts.index.visible_values(function, name))
    return values


def _is_prepare(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in percall_api.PREPARE_METHODS | {"unwrap_model"}


def _persistent_loader(value: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """``DataLoader(..., persistent_workers=<not False>)``."""
    if not isinstance(value, cst.Call) or facts.imports.resolve(value.func) not in _DATALOADERS:
        return False
    return any(
        arg.keyword is not None and arg.keyword.value == "persistent_workers" and not is_literal(arg.value, "False", "None")
        for arg in value.args
    )


def _kind(value: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts) -> str:
    if isinstance(value, cst.Call) and facts.imports.resolve(value.func) in _DATALOADERS:
        return "data loader"
    if built_here(value, function, facts) is not None:
        return "model"
    if facts.value(value).role is Role.OPTIMIZER:
        return "optimizer"
    return f"'{facts.describe(value)}'"


def _statement_holding(node: cst.CSTNode, function: FunctionInfo, facts: ModuleFacts) -> StatementFact | None:
    for fact in facts.index.statements_of(function):
        if any(child is node for child in walk(fact.node, into=not_into_scopes)):
            return fact
    return None
