"""LL305 model-per-call: a model, trainer or pipeline built on every call of a function that runs
many times (an Optuna objective, a validation, a request handler) and kept in a container that
outlives the call."""

from __future__ import annotations

import ast
from typing import Iterator

import libcst as cst

from leaklint.analysis import percall_api
from leaklint.analysis.containers import Store, managed, outlives_call, stores
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.heavy import Built, built_here
from leaklint.analysis.names import dotted_name
from leaklint.analysis.steps import repeated_functions
from leaklint.analysis.structure import FunctionInfo
from leaklint.analysis.syntax import is_literal
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Syntax
from leaklint.rule import Measured, Rule, Violation


class ModelPerCall(Rule):
    code = "LL305"
    name = "model-per-call"
    severity = Severity.LEAK
    summary = (
        "A model, trainer or pipeline built on every call of a function that runs many times (an Optuna "
        "objective, a validation, a request handler) is kept in a list, dict or attribute that outlives the call."
    )
    help = (
        "keep what you need from each call (the score, a checkpoint path, a state_dict moved to the CPU) "
        "and let the object go; to keep the best one, replace it instead of adding to a collection"
    )
    #: Every finding stores, in a function, something built per call into a container (an adding
    #: method, an item assignment or ``+=``); what is built comes from torch.nn, a model library or
    #: a class of the file that derives from one or keeps one: identifiers the file must use.
    needs = (
        percall_api.BUILDS_MODEL
        & Syntax(ast.FunctionDef, ast.AsyncFunctionDef)
        & (Names(*percall_api.ADDING_METHODS) | Syntax(ast.Subscript, ast.AugAssign))
    )
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(8, 0))
    docs = """
## What it finds
A statement in a function that runs many times — an Optuna objective (`study.optimize(objective)`,
also through a lambda, and its `callbacks=`), a `model_init=` handed to a `transformers` or SetFit
`Trainer` (called once per hyperparameter trial), a web request handler (`@app.post(...)` with
FastAPI, Flask...), a framework hook run every step or epoch, or a function called from a loop —
that keeps an object built by that very call in a container that outlives the call:
`results.append(...)`, `models[trial.number] = ...`, `self.models[...] = ...`, `JOBS[job_id] = ...`
on a module-level or `self` list, dict or set that nothing empties.

The object is a model (an `nn.Module` constructor, a class of the file deriving from one,
`from_pretrained`, `timm.create_model`, a local factory returning one), a trainer that keeps the model
(`transformers.Trainer`, SetFit's, TRL's, Lightning's `Trainer`), a diffusers pipeline, or an object of
a class of the file that keeps one of these in an attribute (also through what its constructor is
given). It may sit inside what is stored (`{"trial": n, "trainer": trainer}`) or travel through
Optuna's `trial.set_user_attr(key, model)` to a callback that stores `trial.user_attrs[key]`.

The finding points at the store. When the object is a model or pipeline loaded from disk or the hub
(`from_pretrained`, `pipeline()`) inside the same function and not returned to the caller, it points
at the load instead: loading again on every call is what repeats for nothing.

It stays quiet for a constant key (`best["model"] = model` replaces the previous one), a container
that something pops, clears, deletes from or rebinds, a container the storing function also reads
(a lookup before loading: a cache keyed by model name), objects that come from elsewhere (a
parameter, `self.model`), and functions that run once.

## Why it matters
Each kept object holds its parameters, buffers, optimizer state and often its data loaders and
the GPU memory of all of them. The container keeps every one of them alive until the process
ends, so the memory grows by a whole model per trial, per validation, per request: a search that
fits one model at a time runs out of memory after a few trials, and `gc.collect()` or
`torch.cuda.empty_cache()` cannot free what is still referenced.

## Example
```python
import optuna
import torch.nn as nn

trained = {}

def objective(trial):
    model = nn.Sequential(nn.Linear(128, trial.suggest_int("width", 64, 1024)), nn.ReLU(), nn.Linear(1024, 10))
    accuracy = fit_and_score(model)
    trained[trial.number] = model
    return accuracy

optuna.create_study().optimize(objective, n_trials=100)
```

## Use instead
```python
import optuna
import torch
import torch.nn as nn

def objective(trial):
    model = nn.Sequential(nn.Linear(128, trial.suggest_int("width", 64, 1024)), nn.ReLU(), nn.Linear(1024, 10))
    accuracy = fit_and_score(model)
    torch.save(model.state_dict(), f"trial_{trial.number}.pt")  # keep a checkpoint, not the model
    return accuracy

optuna.create_study().optimize(objective, n_trials=100)
```

## Fix safety
No automatic fix: what to keep instead of the object (a score, a checkpoint path, a state dict on
the CPU, only the best model) is a decision about the program.

## Known false positives
Measured on bench/realcode and on the library code of lightning,
accelerate, peft, timm, torch_geometric, torchmetrics and trl: no finding left after the fixes
below (a list rebound at the top of each loop iteration in a tuple assignment was counted as
growing). A collection of models kept on purpose and bounded by the program (an ensemble of a few
members built in a loop of unknown length, a model zoo filled once per name without a lookup
before the load) is reported; suppress it with `# noqa: LL305`. Containers reached through a
parameter or through another object are not followed, and neither are objects built in another
file.

## References
- Optuna FAQ, "How to save machine learning models trained in objective functions?" and "How do I
  avoid running out of memory (OOM) when optimizing studies?":
  https://optuna.readthedocs.io/en/stable/faq.html
- hyperas, "Memory explosion": returning each trial's model in the result dict kept every trial's
  weights alive: https://github.com/maxpumperla/hyperas/issues/16
- Optuna, "Memory increase over trials" (about 1 GB per trial):
  https://github.com/optuna/optuna/issues/1178
- transformers, "CUDA out of memory error on Trainer hyperparameter_search":
  https://github.com/huggingface/transformers/issues/9716
- Runtime repro: `leaklint verify LL305` measures the leaky and the fixed loop body.
"""

    VALID = (
        # Only the score leaves the trial; the best model replaces the previous one.
        """
import optuna
import torch.nn as nn

scores = []
best = {}

def objective(trial):
    model = nn.Linear(16, trial.suggest_int("out", 1, 8))
    score = float(model.weight.sum())
    scores.append({"trial": trial.number, "score": score})
    best["model"] = model
    return score

optuna.create_study().optimize(objective, n_trials=50)
""",
        # The container is emptied, the model comes from the caller, the function runs once.
        """
import optuna
import torch.nn as nn

recent = []
registry = []

def objective(trial):
    model = nn.Linear(16, trial.suggest_int("out", 1, 8))
    recent.append(model)
    if len(recent) > 2:
        recent.pop(0)
    return float(model.weight.sum())

class Zoo:
    def __init__(self):
        self.models = []

    def register(self, model):
        self.models.append(model)

def build_ensemble(n):
    for _ in range(n):
        registry.append(nn.Linear(16, 4))

build_ensemble(3)
optuna.create_study().optimize(objective, n_trials=50)
""",
        # A request handler that loads each named model once (a lookup before the load).
        """
from fastapi import FastAPI
from transformers import AutoModel

app = FastAPI()
MODELS = {}

@app.get("/embed")
def embed(name: str, text: str):
    if name not in MODELS:
        MODELS[name] = AutoModel.from_pretrained(name)
    return {"dim": MODELS[name].config.hidden_size}
""",
        # A local list dies with the call; a list rebound every iteration does not grow.
        """
import optuna
import torch.nn as nn

def objective(trial):
    members = []
    for _ in range(trial.suggest_int("n", 1, 4)):
        members.append(nn.Linear(8, 8))
    return float(sum(m.weight.sum() for m in members))

class Search:
    def __init__(self):
        self.layers = []

    def step(self, width):
        self.layers, self.norms = [], []
        for _ in range(3):
            self.layers.append(nn.Linear(width, width))

optuna.create_study().optimize(objective, n_trials=20)
""",
    )
    INVALID = (
        """
import optuna
import torch.nn as nn

trained_models = {}

def build(trial):
    return nn.Sequential(nn.Linear(128, trial.suggest_int("width", 16, 256)), nn.ReLU())

def objective(trial):
    model = build(trial)
    trained_models[trial.number] = model  # expect: LL305
    return float(model[0].weight.sum())

optuna.create_study().optimize(objective, n_trials=100)
""",
        # model_init is called once per trial by the trainer's hyperparameter search.
        """
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

loaded = []

def model_init(trial=None):
    model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=3)
    loaded.append(model)  # expect: LL305
    return model

trainer = Trainer(model_init=model_init, args=TrainingArguments("out"))
trainer.hyperparameter_search(direction="minimize", backend="optuna", n_trials=20)
""",
        # A request handler keeps an object that holds a model; an Optuna callback keeps each
        # trial's model handed over through trial.set_user_attr.
        """
import uuid

import optuna
import torch.nn as nn
from fastapi import FastAPI

app = FastAPI()
JOBS = {}

class FineTuneJob:
    def __init__(self, width):
        self.net = nn.Sequential(nn.Linear(512, width), nn.ReLU(), nn.Linear(width, 512))

@app.post("/jobs")
def start(width: int):
    job_id = str(uuid.uuid4())
    job = FineTuneJob(width)
    JOBS[job_id] = job  # expect: LL305
    return {"id": job_id}

class KeepModels:
    def __init__(self):
        self.models = {}

    def __call__(self, study, trial):
        self.models[trial.number] = trial.user_attrs["model"]  # expect: LL305

def objective(trial):
    model = nn.Linear(32, trial.suggest_int("out", 1, 16))
    trial.set_user_attr("model", model)
    return float(model.weight.sum())

keep = KeepModels()
optuna.create_study().optimize(objective, n_trials=40, callbacks=[keep])
""",
        # A validation pipeline loaded from the hub on every validation and kept: reported at the load.
        """
import torch
from diffusers import StableDiffusionPipeline

pipelines = []

def log_validation(unet, step):
    pipeline = StableDiffusionPipeline.from_pretrained("runwayml/stable-diffusion-v1-5", unet=unet)  # expect: LL305
    pipelines.append(pipeline)
    pipeline("a photo of a cat").images[0].save(f"val_{step}.png")

def train(unet, loader, optimizer):
    for step, batch in enumerate(loader):
        loss = unet(batch).sample.pow(2).mean()
        loss.backward()
        optimizer.step()
        if step % 500 == 0:
            log_validation(unet, step)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """An objective run once per trial builds a model and keeps it in a dict that outlives the
        trial, vs one that keeps only the trial's score."""

        def setup(self, ctx):
            import torch

            torch.manual_seed(0)
            ctx.x = torch.randn(64, 256, device=ctx.device)
            ctx.trained = {}
            ctx.scores = []
            ctx.trial = 0

        def _objective(self, ctx):
            import torch

            model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(ctx.device)
            with torch.no_grad():
                score = float(model(ctx.x).std())
            return model, score

        def leaky(self, ctx):
            ctx.trial += 1
            model, score = self._objective(ctx)
            ctx.trained[ctx.trial] = model

        def fixed(self, ctx):
            ctx.trial += 1
            model, score = self._objective(ctx)
            ctx.scores.append(score)


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file: one per object built per call and kept."""
    repeated = repeated_functions(facts)
    reported: set[cst.CSTNode] = set()
    for store in stores(facts):
        function = store.statement.function
        reason = repeated.get(function)
        if reason is None or function.name == "__init__" or not outlives_call(store, facts):
            continue
        if store.key is not None and _constant(store.key):
            continue  # cache["best"] = model: replaced, not added to
        built = _built_in(store.added, function, facts)
        if built is None or managed(store.container, store.owner, facts) or _looks_up(store, function):
            continue
        node, statement = _where(store, built, function, facts)
        if node in reported:
            continue
        reported.add(node)
        confidence = Confidence.HIGH if any(word in reason for word in ("trial", "request", "framework")) else Confidence.MEDIUM
        yield Violation(
            node=node,
            message=(
                f"{built.what}, one per call of '{function.name}' ({reason}), is kept in "
                f"'{store.container}', which outlives the call: every call adds another one, with its "
                "parameters and buffers, and none is freed"
            ),
            confidence=confidence,
            statement=statement,
        )


def _looks_up(store: Store, function: FunctionInfo) -> bool:
    """The storing function also looks the container up by key (``if name not in MODELS:``,
    ``MODELS.get(name)``, ``MODELS[name]``): a cache that loads each key once, bounded by the keys
    in use. (``len(models)`` as a key is a counter, not a lookup.)"""
    node = function.node
    if node is None:
        return False
    targets = set()
    for current in walk(node.body, into=not_into_scopes):
        if isinstance(current, cst.AssignTarget) and isinstance(current.target, cst.Subscript):
            targets.add(current.target)
    for current in walk(node.body, into=not_into_scopes):
        if isinstance(current, cst.Subscript) and current not in targets and dotted_name(current.value) == store.container:
            return True
        if (
            isinstance(current, cst.Call)
            and isinstance(current.func, cst.Attribute)
            and current.func.attr.value == "get"
            and dotted_name(current.func.value) == store.container
        ):
            return True
        if isinstance(current, cst.Comparison) and any(
            isinstance(target.operator, (cst.In, cst.NotIn)) and dotted_name(target.comparator) == store.container
            for target in current.comparisons
        ):
            return True
    return False


def _constant(key: cst.BaseExpression) -> bool:
    return isinstance(key, (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)) or is_literal(
        key, "True", "False", "None"
    )


def _built_in(added: tuple[cst.BaseExpression, ...], function: FunctionInfo, facts: ModuleFacts) -> Built | None:
    """The object built in this call among what is added: an argument itself, or an element of a
    tuple, list, set or dict literal (``{"trial": n, "trainer": trainer}``)."""
    for expr in added:
        for candidate in _elements(expr):
            built = built_here(candidate, function, facts)
            if built is not None:
                return built
    return None


def _elements(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    yield expr
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        for element in expr.elements:
            yield from _elements(element.value)
    elif isinstance(expr, cst.Dict):
        for element in expr.elements:
            if isinstance(element, cst.DictElement):
                yield from _elements(element.value)


def _where(store: Store, built: Built, function: FunctionInfo, facts: ModuleFacts) -> tuple[cst.CSTNode, cst.CSTNode]:
    """Point at the store, except for a model or pipeline loaded from disk or the hub in this very
    function and not handed back to its caller: then the load is what repeats for nothing (load it
    once outside, or release it), and the finding goes there."""
    if built.loaded and not _returns_built(built, function, facts):
        fact = _statement_of(built.node, function, facts)
        if fact is not None:
            return fact.node, fact.node
    return store.statement.node, store.statement.node


def _statement_of(node: cst.CSTNode, function: FunctionInfo, facts: ModuleFacts):
    for fact in facts.index.statements_of(function):
        if any(child is node for child in walk(fact.node, into=not_into_scopes)):
            return fact
    return None


def _returns_built(built: Built, function: FunctionInfo, facts: ModuleFacts) -> bool:
    node = function.node
    if node is None:
        return False
    for returned in walk(node.body, into=not_into_scopes):
        if isinstance(returned, cst.Return) and returned.value is not None:
            found = built_here(returned.value, function, facts)
            if found is not None and found.node is built.node:
                return True
    return False
