"""LL306 cache-growth: a dict or list kept on ``self`` (or at module level) that gets a new entry
of tensors with every call or every input, and that nothing reads back or trims."""

from __future__ import annotations

import ast
from typing import Iterator

import libcst as cst

from leaklint.analysis import percall_api, torch_api
from leaklint.analysis.arguments import VARIES, literal_arguments
from leaklint.analysis.containers import Store, managed, outlives_call, stores
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.heavy import model_attributes
from leaklint.analysis.names import dotted_name
from leaklint.analysis.steps import repeated_functions, resolved_calls
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.structure import ClassInfo, FunctionInfo, GradMode, bound_names
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.values import Role
from leaklint.analysis.walk import walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Syntax, Words
from leaklint.rule import Measured, Rule, Violation


class CacheGrowth(Rule):
    code = "LL306"
    name = "cache-growth"
    severity = Severity.LEAK
    summary = (
        "A dict or list on self (or at module level) gets a new entry of tensors with every call or every "
        "input, and nothing reads it back or removes old entries."
    )
    help = (
        "keep only what is read again: drop the store, bound it (pop the oldest entry, keep the last N), "
        "or clear it when the run, request or video ends"
    )
    #: Every finding adds a model's output, computed without a graph, to a container (an adding
    #: method, an item assignment or ``+=``) inside a function: the model is built with torch.nn or
    #: a model library, or known by a method only modules have (``.eval()``...), and gradients are
    #: off by a word of the file (``no_grad``, ``detach``...) or in a Lightning evaluation hook.
    needs = (
        (percall_api.BUILDS_MODEL | Names(*torch_api.MODULE_EVIDENCE_METHODS))
        & (Words(*percall_api.GRAD_OFF_WORDS) | Names(*torch_api.LIGHTNING_NO_GRAD_HOOKS))
        & Syntax(ast.FunctionDef, ast.AsyncFunctionDef)
        & (Names(*percall_api.ADDING_METHODS) | Syntax(ast.Subscript, ast.AugAssign))
    )
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(4, 0))
    docs = """
## What it finds
A store of tensors into a dict or list that outlives the call — an attribute of `self` (outside
`__init__`) or a module-level name — that adds a new entry every time (`append`, `extend`, `add`,
`d[key] = ...` with a key that is not a constant), when nothing in the file ever takes entries out
(`pop`, `clear`, `del d[k]`, rebinding it outside `__init__`, a `deque(maxlen=...)`), and either

- **nothing reads it back**: the container is only ever written (no lookup, no iteration, no `len`,
  not passed or returned, not read through another object): every call of the method adds an
  entry that is never used again (per-call KV caches and generation outputs kept "for later",
  inputs remembered for a replay that never comes, embeddings stored per validation step); or
- **it is keyed by the position in a loop over the method's input**:
  `for idx, frame in enumerate(frames): self.cache[idx] = ...`, so it keeps one entry per item of a
  stream (every frame of a video) for as long as the object lives.

What is stored must be a model's output that carries no autograd graph: a forward or a
generation (`self.model.generate(...)`) of something known to be a model — built with `torch.nn`
or a model library, or `self.encoder` when every construction of the class in the file passes a
model for it — run where gradients are off (a `torch.no_grad()` / `torch.inference_mode()` block
or decorator, `set_grad_enabled(False)`, a Lightning `validation_step` / `test_step` /
`predict_step`, a function only ever called under one of these), detached (`.detach()`), or of a
frozen model; also what tensor methods keep of it (`.cpu()`, `[0]`, `.sequences`), tuples, lists
and dicts of such outputs, and a parameter that every caller in the file passes one for.
Outputs that keep their graph are LL102's and LL105's. The confidence is high when the storing
function runs many times (a hook, a step, a function called in a loop), medium otherwise.

## Why it matters
An entry added per call and never removed keeps its tensors — often on the GPU — for the life of
the object or the program. A generation backend that remembers each call's outputs, a tracker
that caches every frame's features, a session that keeps every step's hidden states: each grows
with the number of requests, frames or tokens, until the process runs out of memory. Nothing
frees them, because they are still referenced.

## Example
```python
class VideoPredictor:
    def __init__(self, model):
        self.model = model
        self.frame_cache = {}

    @torch.inference_mode()
    def propagate(self, frames):
        for idx, frame in enumerate(frames):
            feats = self.model.encoder(frame)
            self.frame_cache[idx] = {"features": feats, "memory": self.model.memory(feats)}
            yield self.model.decoder(feats)
```

## Use instead
```python
    @torch.inference_mode()
    def propagate(self, frames, keep=7):
        for idx, frame in enumerate(frames):
            feats = self.model.encoder(frame)
            self.frame_cache[idx] = {"memory": self.model.memory(feats)}
            self.frame_cache.pop(idx - keep, None)  # keep the last few frames only
            yield self.model.decoder(feats)
```

## Fix safety
No automatic fix: whether to drop the store, bound the container, move its tensors to the CPU or
clear it at the end of a request or video depends on what the program reads back.

## Known false positives
Measured on bench/realcode and on the library code of lightning,
accelerate, peft, timm, torch_geometric, torchmetrics and trl: no finding. A near miss found on the
leak benchmark's negatives and fixed: a logging mix-in whose dict is read by another class through
the instance (`cb.image_logs.items()`) counts as read. A container read only by code in another
file, or emptied by a caller through a method of another file, is reported; suppress it with
`# noqa: LL306`. Memoising caches that are read back and keyed by arguments (shapes, names) are not
reported, even when their key space is unbounded. Not seen: tensors that are not a model's output
(a cache of `torch.randn` buffers), outputs taken with `.data`, and gradients turned off only by a
decorator of another file whose name says neither `no_grad` nor `inference_mode`.

## References
- Lang2SegTrack, "GPU memory usage grows continuously on long videos, causing out-of-memory errors":
  https://github.com/wngkj/Lang2SegTrack/issues/11
- Segment-and-Track-Anything, "Cuda out of memory for very long videos" (long-term memory grows
  with the video): https://github.com/z-x-yang/Segment-and-Track-Anything/issues/61
- moondream-station, "mlx mem leak fix" (a KV cache per inference kept growing the pool):
  https://github.com/m87-labs/moondream-station/pull/30
- tangermeme, "Fixed GPU memory leak in deep_lift_shap.py" (detached inputs and outputs kept on the
  modules after use): https://github.com/jmschrei/tangermeme/pull/84
- Runtime repro: `leaklint verify LL306` measures the leaky and the fixed loop body.
"""

    VALID = (
        # Keyed by a parameter that every call gives a literal: one entry per literal, not per call.
        """
import torch
class Trainer:
    def __init__(self, model):
        self.model = model
        self.image_logs = {}
    def log_image(self, key, image):
        self.image_logs[key] = image
    def step(self, x):
        with torch.no_grad():
            out = self.model(x)
        self.log_image("reconstruction", out[:8])
        self.log_image(key="input", image=x[:8])
trainer = Trainer(torch.nn.Linear(4, 4))
for x in loader:
    trainer.step(x)
""",
        # A memo read back by key; a dict emptied per request; a bounded deque; floats only.
        """
from collections import deque

import torch

class Encoder:
    def __init__(self, model):
        self.model = model
        self._cache = {}
        self.recent = deque(maxlen=8)
        self.history = []
        self.timings = {}

    @torch.no_grad()
    def encode(self, text, step):
        if text not in self._cache:
            self._cache[text] = self.model(text)
        self.recent.append(self._cache[text])
        self.timings[step] = 0.1
        return self._cache[text]

    def end_request(self):
        self.history.clear()

    @torch.no_grad()
    def step(self, x):
        out = self.model(x)
        self.history.append(out)
        return out
""",
        # A logging mix-in whose dict another class reads; a constant key replaces the entry.
        """
import torch
import torch.nn as nn

class LoggingMixin:
    def __init__(self):
        self.image_logs = {}
        self.last = {}

    def log_image(self, key, value):
        self.image_logs[key] = value.detach()

class Loss(LoggingMixin, nn.Module):
    def forward(self, x):
        recon = torch.tanh(x)
        self.log_image("recon", recon)
        self.last["recon"] = recon.detach()
        return recon.mean()

class Writer:
    def __init__(self, callbacks, writer):
        self.callbacks, self.writer = callbacks, writer

    def end_batch(self, step):
        for cb in self.callbacks:
            for key, value in cb.image_logs.items():
                self.writer.add_images(key, value, step)
""",
    )
    INVALID = (
        """
import hashlib

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

class Backend:
    def __init__(self, name="gpt2"):
        self.tokenizer = AutoTokenizer.from_pretrained(name)
        self.model = AutoModelForCausalLM.from_pretrained(name).eval()
        self._outputs = {}

    @torch.no_grad()
    def generate(self, prompt):
        key = hashlib.sha1(prompt.encode()).hexdigest()
        inputs = self.tokenizer(prompt, return_tensors="pt")
        out = self.model.generate(**inputs, max_new_tokens=32, return_dict_in_generate=True)
        self._outputs[key] = out  # expect: LL306
        return self.tokenizer.decode(out.sequences[0])
""",
        # One entry per frame of the input stream, never trimmed.
        """
import torch
import torch.nn as nn

class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv2d(3, 64, 16, 16)
        self.decoder = nn.Conv2d(64, 1, 1)

class Predictor:
    def __init__(self, model):
        self.model = model.eval()
        self.frame_cache = {}

    @torch.inference_mode()
    def propagate(self, frames):
        for idx, frame in enumerate(frames):
            feats = self.model.encoder(frame.unsqueeze(0))
            self.frame_cache[idx] = {"features": feats}  # expect: LL306
            yield self.model.decoder(feats)

predictor = Predictor(Segmenter())
""",
        # A session remembers every step's inputs; nothing reads them.
        """
import torch
import torch.nn as nn

class Session:
    def __init__(self, blocks):
        self.blocks = blocks
        self._inputs_history = []

    def step(self, hidden):
        self._inputs_history.append(hidden)  # expect: LL306
        return self.blocks(hidden)

class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, 64)
        self.blocks = nn.Linear(64, 64)
        self.head = nn.Linear(64, 1000)

    @torch.inference_mode()
    def generate(self, ids, steps=256):
        session = Session(self.blocks)
        hidden = self.embed(ids)
        for _ in range(steps):
            out = session.step(hidden)
            ids = self.head(out[:, -1]).argmax(-1, keepdim=True)
            hidden = self.embed(ids)
        return ids
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A generation backend that keeps every call's output in a dict on ``self`` (keyed by the
        call, never read back) vs one that returns it and keeps nothing."""

        def setup(self, ctx):
            import torch

            torch.manual_seed(0)
            ctx.model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.Tanh(), torch.nn.Linear(512, 256)).to(ctx.device)
            ctx.outputs = {}
            ctx.calls = 0

        def _generate(self, ctx):
            import torch

            ctx.calls += 1
            with torch.no_grad():
                return ctx.model(torch.randn(128, 256, device=ctx.device))

        def leaky(self, ctx):
            out = self._generate(ctx)
            ctx.outputs[f"call-{ctx.calls}"] = out

        def fixed(self, ctx):
            out = self._generate(ctx)
            float(out.mean())


# --- detection ------------------------------------------------------------------------------------
#: How deep :func:`_tensor_source` follows names, parameters and call sites.
_MAX_DEPTH = 4


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    repeated = repeated_functions(facts)
    reported: set[cst.CSTNode] = set()
    for store in stores(facts):
        function = store.statement.function
        if function.name == "__init__" or store.how == "setdefault" or not outlives_call(store, facts):
            continue
        if store.key is not None and (_constant(store.key) or _literal_at_every_call(store.key, function, facts)):
            continue
        if managed(store.container, store.owner, facts):
            continue
        what = next((found for expr in store.added if (found := _tensor_source(expr, function, facts, 0))), None)
        if what is None:
            continue
        node = store.statement.node
        if node in reported:
            continue
        if not _read_back(store, facts):
            reason = repeated.get(function)
            message = (
                f"'{store.container}' gets a new entry ({what}) on every call of '{function.name}'"
                + (f" ({reason})" if reason else "")
                + ", and nothing reads it back or removes entries: it keeps every call's tensors for as long "
                + ("as the object lives" if store.owner is not None else "as the program runs")
            )
            confidence = Confidence.HIGH if reason else Confidence.MEDIUM
        else:
            loop = _counter_loop(store)
            if loop is None:
                continue
            message = (
                f"'{store.container}' keeps an entry ({what}) for every item of the loop over "
                f"'{_describe(facts, loop.iter)}' in '{function.name}', keyed by the item's position, and "
                "nothing removes old entries: it grows with the length of the input and outlives the call"
            )
            confidence = Confidence.MEDIUM
        reported.add(node)
        yield Violation(node=node, message=message, confidence=confidence, statement=node)


def _describe(facts: ModuleFacts, node: cst.CSTNode) -> str:
    return facts.describe(node)


def _constant(key: cst.BaseExpression) -> bool:
    return isinstance(key, (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)) or (
        isinstance(key, cst.Name) and key.value in ("True", "False", "None")
    )


def _literal_at_every_call(key: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts) -> bool:
    """The key is a parameter that every call of the function in the file gives a literal
    (``self.log_image("reconstruction", ...)``): the container holds one entry per literal, not one
    per call. A function no call of the file reaches may be called with anything."""
    if not isinstance(key, cst.Name) or key.value not in function.params or function.node is None:
        return False
    calls = [call for call, _, callee in resolved_calls(facts) if callee is function]
    if not calls:
        return False
    for call in calls:
        bound = function.is_method and isinstance(call.func, cst.Attribute)
        if literal_arguments(function.node, call, bound=bound).get(key.value, VARIES) is VARIES:
            return False
    return True


# --- is what is stored a tensor (without a graph: graphs are LL102/LL105's) ---------------------------
def _tensor_source(
    expr: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts, depth: int, detached: bool = False
) -> str | None:
    """Why ``expr`` holds a model's output computed without an autograd graph ("a model output"), or
    None: a forward or generation of something known to be a model (also ``self.encoder(...)``
    where every construction of the class passes a model for ``encoder``) run with gradients off
    (a ``no_grad`` / ``inference_mode`` block or decorator, a Lightning evaluation hook, a caller
    that runs it without grad), detached (``.detach()`` in the chain) or of a frozen model; what a
    tensor method keeps of it (``.cpu()``, ``[0]``, ``.sequences``); a literal tuple/list/dict
    holding one; a local name bound to one; or a parameter every caller in the file passes one
    for. Outputs that keep their graph are LL102's and LL105's."""
    if depth > _MAX_DEPTH:
        return None
    if depth == 0:
        value = facts.value(expr)
        if value.is_graph and value.confidence >= Confidence.MEDIUM:
            return None
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return next((found for e in expr.elements if (found := _tensor_source(e.value, function, facts, depth + 1, detached))), None)
    if isinstance(expr, cst.Dict):
        return next(
            (
                found
                for e in expr.elements
                if isinstance(e, cst.DictElement) and (found := _tensor_source(e.value, function, facts, depth + 1, detached))
            ),
            None,
        )
    if isinstance(expr, cst.Call):
        model = _runs_model(expr, function, facts)
        if model is not None:
            if detached or model is Role.FROZEN_MODEL or _grad_off(expr, facts):
                return "a model output"
            return None
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _KEEPS_TENSOR:
            now_detached = detached or func.attr.value in torch_api.DETACH_METHODS
            return _tensor_source(func.value, function, facts, depth + 1, now_detached)
        return None
    if isinstance(expr, (cst.Subscript, cst.Attribute)) and not (isinstance(expr, cst.Attribute) and _is_self(expr.value)):
        return _tensor_source(expr.value, function, facts, depth + 1, detached)
    if isinstance(expr, cst.Name) and function.node is not None:
        if expr.value in function.params:
            return _passed_tensor(function, expr.value, facts, depth)
        for assigned in facts.index.assigned_values(function, expr.value):
            found = _tensor_source(assigned, function, facts, depth + 1, detached)
            if found is not None:
                return found
    return None


#: Tensor methods whose result keeps the tensor's data (a copy, a view, another device or dtype).
_KEEPS_TENSOR = torch_api.VIEW_METHODS | torch_api.DETACH_METHODS | {"clone", "sigmoid", "softmax", "float"}


def _grad_off(call: cst.Call, facts: ModuleFacts) -> bool:
    """The statement running ``call`` runs with gradients off, for a reason this file shows: a
    grad-disabling block or decorator of torch, a Lightning evaluation hook, callers that all run
    it without grad. (A decorator of another file that turns gradients off, named without any of
    :data:`~leaklint.analysis.percall_api.GRAD_OFF_WORDS`, is not counted.)"""
    fact = facts.derived(_statements_by_call).get(call)
    if fact is None or fact.grad is not GradMode.DISABLED:
        return False
    info: FunctionInfo | None = fact.function
    while info is not None and info.node is not None:
        if info.decorator_grad is GradMode.DISABLED:
            texts = [facts.module.code_for_node(d.decorator) for d in info.node.decorators]
            return any(word in text for text in texts for word in percall_api.GRAD_OFF_WORDS)
        info = info.parent
    return True


def _statements_by_call(facts: ModuleFacts) -> dict[cst.Call, StatementFact]:
    return {call: fact for call, fact in facts.index.statement_calls}


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _runs_model(call: cst.Call, function: FunctionInfo, facts: ModuleFacts) -> Role | None:
    """``model(x)``, ``self.text_encoder(ids)``, ``self.model.generate(...)``: a forward (or a
    generation) of something known to be a model; the model's role (frozen or not), or None."""
    func = call.func
    candidates = [func]
    if isinstance(func, cst.Attribute) and func.attr.value not in torch_api.MODULE_API_METHODS:
        candidates.append(func.value)
    for candidate in candidates:
        value = facts.value(candidate)
        if value.role in (Role.MODEL, Role.FROZEN_MODEL) and value.confidence >= Confidence.MEDIUM:
            return value.role
        name = dotted_name(candidate)
        cls = function.cls
        if name and cls is not None and name in model_attributes(facts).get(cls, set()):
            return Role.MODEL
    return None


def _passed_tensor(function: FunctionInfo, param: str, facts: ModuleFacts, depth: int) -> str | None:
    """What every call of ``function`` in the file passes for ``param``, when each is a tensor."""
    node = function.node
    assert node is not None
    params = list(function.params)
    if function.is_method and params and params[0] in ("self", "cls"):
        params = params[1:]
    if param not in params:
        return None
    position = params.index(param)
    found = None
    for call, fact, callee in resolved_calls(facts):
        if callee is not function:
            continue
        arg = call_argument(call, position, param)
        if arg is None:
            return None
        source = _tensor_source(arg, fact.function, facts, depth + 1)
        if source is None:
            return None
        found = source
    return found


# --- is the container read back ------------------------------------------------------------------------
def _read_back(store: Store, facts: ModuleFacts) -> bool:
    """Anything but adding to the container (and building it) uses it: a lookup, ``in``, an
    iteration, ``len()``, passing or returning it."""
    return store.container in _read_containers(store.owner, facts)


def _read_containers(owner: ClassInfo | None, facts: ModuleFacts) -> set[str]:
    return facts.derived(_containers_read).get(owner, set())


def _containers_read(facts: ModuleFacts) -> dict[ClassInfo | None, set[str]]:
    writes: set[cst.CSTNode] = set()
    for store in stores(facts):
        node = store.statement.node
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute):
            writes.add(node.value.func.value)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Subscript):
                    writes.add(target.target.value)
        elif isinstance(node, cst.AugAssign):
            writes.add(node.target)
    for fact in facts.statements():
        node = fact.node
        if isinstance(node, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            writes.update(target for target in targets if isinstance(target, (cst.Name, cst.Attribute)))
    # An attribute read through any object (``cb.image_logs`` in a logger) counts for every class:
    # the object may be an instance of the class that fills it.
    not_reads: set[cst.CSTNode] = set()
    attribute_reads: set[str] = set()
    for node in walk(facts.module):
        if isinstance(node, cst.Attribute):
            not_reads.add(node.attr)
            if node not in writes:
                attribute_reads.add(f"self.{node.attr.value}")
        elif isinstance(node, cst.Global):
            not_reads.update(item.name for item in node.names)
    plain_reads = {
        node.value
        for node in walk(facts.module)
        if isinstance(node, cst.Name) and node not in not_reads and node not in writes
    }
    read: dict[ClassInfo | None, set[str]] = {None: plain_reads}
    for cls in facts.structure.classes.values():
        read[cls] = attribute_reads
    return read


def _counter_loop(store: Store) -> cst.For | None:
    """The loop whose position the key is: ``for idx, frame in enumerate(frames): cache[idx] = ...``
    or ``for i in range(len(items)):``, over something the function is given (an input stream)."""
    key = store.key
    if not isinstance(key, cst.Name):
        return None
    for loop in reversed(store.statement.loops):
        node = loop.node
        if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call) or not isinstance(node.iter.func, cst.Name):
            continue
        target = node.target
        if node.iter.func.value == "enumerate" and isinstance(target, cst.Tuple) and target.elements:
            counter = bound_names(target.elements[0].value)
        elif node.iter.func.value == "range" and isinstance(target, cst.Name):
            counter = [target.value]
        else:
            continue
        if key.value in counter and loop.at_most is None and _from_params(node.iter, store.statement.function):
            return node
    return None


def _from_params(iterable: cst.BaseExpression, function: FunctionInfo) -> bool:
    params = set(function.params) - {"self", "cls"}
    return any(isinstance(node, cst.Name) and node.value in params for node in walk(iterable))
