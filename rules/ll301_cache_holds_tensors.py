"""LL301 cache-holds-tensors: functools caches that keep models, instances or tensors alive forever."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.arguments import is_bound_to_object
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.heavy import model_holders
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.values import Evidence, Kind
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Words
from leaklint.rule import Measured, Rule, Violation


class CacheHoldsTensors(Rule):
    code = "LL301"
    name = "cache-holds-tensors"
    severity = Severity.LEAK
    summary = "A functools cache on a method or a tensor function keeps instances, models or tensors alive forever."
    help = (
        "cache per instance (functools.cached_property, or a dict on self), bound the cache "
        "(lru_cache(maxsize=...)), or key it on plain values and return detached CPU copies"
    )
    needs = Words("functools", "lru_cache") & Names("lru_cache", "cache")
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), from
    #: bench/measured.py (stop 28): one debatable finding on real code, so the leak benchmark decides.
    measured = Measured(realcode=(0, 0, 1), leaks=(3, 0))
    docs = """
## What it finds
`functools.lru_cache` and `functools.cache` (under any import alias: `from functools import
lru_cache`, `import functools as ft`) used as a decorator on

- a **method** (first parameter `self`, not a `@staticmethod`): the cache lives on the class and
  keeps every `self` it has seen, with every argument and result. flake8-bugbear's B019 and
  pylint's W1518 report the same thing for all Python code; here it is reported with high
  confidence when the instance is heavy — an `nn.Module`, or a class that holds a model, a trainer
  or a pipeline in an attribute, directly or through an object its constructor is given (a wrapper
  around a world that holds the agent that holds the model: every construction in the file is
  looked at) — or when the cache is unbounded and returns tensors;
- a **function** that takes tensors (parameters annotated `torch.Tensor`) or returns them (a model
  output, the result of a torch function, a `-> torch.Tensor` annotation, or what `torch.load` /
  `torch.jit.load` returns — a tensor, a state dict or a whole model, each as heavy to keep), when
  the cache is unbounded (`@cache`, `lru_cache(maxsize=None)`) or larger than 1024 entries, and
  its keys can grow: not when every parameter takes a handful of values — a device (read only as
  the target of `.to(device)`, `.cuda(device)` or a `device=` argument) or a value the function
  asserts to be one of a few literals (`assert n_mels in {80, 128}`, `if n not in (...): raise`),
  as in Whisper's `mel_filters(device, n_mels)`, one small table per accelerator.

Tensor arguments make it worse: tensors hash by identity, so every call with a new batch misses
the cache and adds an entry that pins that batch (and the result) until the process exits.

Confidence: high for a method of a heavy class, an unbounded method cache returning tensors, and an
unbounded function cache keyed on tensors or returning model outputs; medium for bounded method
caches returning tensors, method caches on `Dataset` subclasses, unbounded method caches, and
unbounded (or > 1024) function caches returning tensors from plain keys; low for bounded caches on
methods of plain classes, and for unbounded ones on a plain class (no model, no tensors) whose
every instance the file builds once, in its top-level code: module-level objects that live as
long as the cache anyway.

## Why it matters
A module-level cache is never emptied. A method cache pins whole models (and their GPU memory)
after `del model`, and an unbounded cache of tensors grows with every new key: every new sequence
length, every new text, every batch. The growth looks like a slow leak that no `gc.collect()` or
`torch.cuda.empty_cache()` frees.

## Example
```python
class TextEncoder:
    def __init__(self, name):
        self.model = AutoModel.from_pretrained(name)

    @functools.lru_cache(maxsize=None)
    def embed(self, text):
        return self.model(**self.tokenizer(text, return_tensors="pt")).last_hidden_state
```

## Use instead
```python
class TextEncoder:
    def __init__(self, name):
        self.model = AutoModel.from_pretrained(name)
        self._cache = {}  # dies with the instance; clear it when it grows too large

    @torch.no_grad()
    def embed(self, text):
        if text not in self._cache:
            self._cache[text] = self.model(**self.tokenizer(text, return_tensors="pt")).last_hidden_state.cpu()
        return self._cache[text]
```

## Fix safety
No automatic fix: replacing the `functools` cache means choosing a new home and a bound for it (a
dict on the instance, a smaller `maxsize`, a weak reference, or no cache at all), a design decision.

## Known false positives
On bench/realcode's scripts and notebooks it reports nothing at the default confidence (at low
confidence: nnU-Net's bounded method caches on its plans managers, and the tokenizer cache below);
in its library code, one debatable finding (accelerate's `warning_once`
cache on logger adapters that live as long as the process anyway). The
three findings it used to report were all misleading: Whisper's `mel_filters(device, n_mels)`, an
unbounded cache whose keys are one device and an asserted `n_mels` (one small filterbank per
device, by design: not reported any more), and a tokenizer method cache in two notebooks whose
tokenizers are module-level globals built once (low confidence now: the instances live as long as
the cache anyway). A bounded `lru_cache` (the default 128 entries, up to 1024) on a function that returns tensors is
taken as deliberate memoisation (causal masks per length, positional tables per shape) and not
reported; an unbounded one keyed on plain values is reported with medium confidence, because the
number of distinct keys may be small in practice. Caches on methods of `Enum` classes (members are
singletons), `@staticmethod` caches of pure functions, `functools.cached_property` (per instance),
caches on functions defined inside other functions (they die with the closure) and test code
(`test_*` functions, `Test*` classes) are not reported. A bounded cache on a method of a plain class
(no model, not a Dataset, no tensors returned) — value objects such as `Color.downgrade` — is only
reported with low confidence: flake8-bugbear's B019 covers that generic case, and the memory is
small. A cache on a method of a singleton that lives for the whole program is reported anyway;
suppress it with `# noqa: LL301` (a `# noqa: B019` or pylint `disable=method-cache-max-size-none`
already on the decorator or `def` line counts too).

## References
- flake8-bugbear B019, "Use of functools.lru_cache or functools.cache on methods can lead to
  memory leaks": https://github.com/PyCQA/flake8-bugbear#list-of-warnings (Ruff's version:
  https://docs.astral.sh/ruff/rules/cached-instance-method/)
- Python FAQ, "How do I cache method calls?":
  https://docs.python.org/3/faq/programming.html#how-do-i-cache-method-calls
- PyTorch removed a `functools.cache` from distributed `state_dict` because it kept deleted
  models alive: https://github.com/pytorch/pytorch/pull/149354 (issue
  https://github.com/pytorch/pytorch/issues/149100)
- A class-level `lru_cache` on model methods keeping RT-DETR and other models alive after `del`:
  https://github.com/huggingface/transformers/issues/45412 (proposed fix:
  https://github.com/huggingface/transformers/pull/45708)
- Runtime repro: `leaklint verify LL301` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch
from functools import lru_cache

@lru_cache(maxsize=256)
def tokenize(text: str) -> tuple:
    return tuple(ord(c) for c in text)

@lru_cache(maxsize=64)
def causal_mask(n: int):
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
""",
        """
import functools
import torch
import torch.nn as nn

class Embedder(nn.Module):
    @functools.cached_property
    def table(self):
        return torch.randn(10, 4)

    @staticmethod
    @functools.lru_cache(maxsize=32)
    def vocab_size(name: str) -> int:
        return len(name)
""",
        """
import enum
import functools
import torch

class Split(enum.Enum):
    TRAIN = "train"
    VAL = "val"

    @functools.cache
    def folder(self):
        return self.value.upper()

@functools.cache
def config_for(name):
    return {"lr": 0.1, "name": name}
""",
        """
import torch
from functools import lru_cache

def build_positional(dim):
    @lru_cache(maxsize=None)
    def table(n):
        return torch.arange(n)[:, None] * torch.ones(dim)
    return table

class TestCache:
    @lru_cache(maxsize=None)
    def fixture_tensor(self):
        return torch.ones(3)
""",
        # Whisper's idiom: one filterbank per device (n_mels asserted); a tokenizer built once at
        # module level, whose method cache keeps nothing that would otherwise be freed.
        """
import os
from functools import lru_cache
import numpy as np
import torch

@lru_cache(maxsize=None)
def mel_filters(device, n_mels: int = 80) -> torch.Tensor:
    assert n_mels in {80, 128}, f"unsupported n_mels: {n_mels}"
    with np.load(os.path.join(os.path.dirname(__file__), "mel_filters.npz")) as f:
        return torch.from_numpy(f[f"mel_{n_mels}"]).to(device)

class BPETokenizer:
    def __init__(self):
        self.vocab = {"<|endoftext|>": 50256}

    @lru_cache(maxsize=None)
    def special_token_id(self, token):
        return self.vocab[token]

tokenizer = BPETokenizer()
""",
        """
import functools
import torch

class Environment:
    @functools.lru_cache(maxsize=1)
    def world_size(self) -> int:
        return torch.cuda.device_count()

    @functools.lru_cache(maxsize=None)  # noqa: B019 - one environment per process
    def hostname(self):
        return "localhost"
""",
    )
    INVALID = (
        # torch.load returns a tensor, a state dict or a whole model: each is kept per path
        """
import functools
import torch
@functools.lru_cache(maxsize=None)  # expect: LL301
def load_embeddings(path):
    return torch.load(path, map_location="cpu")
@functools.cache  # expect: LL301
def load_weights(path, key):
    state = torch.load(path)
    return state[key].float()
""",
        """
import torch
import torch.nn as nn
from functools import lru_cache

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    @lru_cache(maxsize=128)  # expect: LL301
    def encode(self, x):
        return self.proj(x)
""",
        """
import functools as ft
import torch
from transformers import AutoModel

class TextEncoder:
    def __init__(self, name):
        self.model = AutoModel.from_pretrained(name)

    @ft.lru_cache(maxsize=None)  # expect: LL301
    def embed(self, text):
        return self.model(text).last_hidden_state
""",
        """
import torch
from functools import cache, lru_cache

@cache  # expect: LL301
def normalize(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm()

@lru_cache(maxsize=None)  # expect: LL301
def rotary_table(seq_len, dim):
    return torch.outer(torch.arange(seq_len), torch.ones(dim))

@lru_cache(maxsize=100_000)  # expect: LL301
def sinusoid(seq_len):
    return torch.sin(torch.arange(seq_len))
""",
        # Even maxsize=1 pins the last instance: here a wrapper whose inner world holds the model.
        """
import functools
import torch.nn as nn

class Agent:
    def __init__(self):
        self.model = nn.Linear(512, 512)

class World:
    def __init__(self, agent):
        self.agent = agent

class BatchWorld:
    def __init__(self, world):
        self.world = world

    @functools.lru_cache(maxsize=1)  # expect: LL301
    def num_examples(self):
        return 1000

def build():
    return BatchWorld(World(Agent()))
""",
        """
import functools
import torch

class Registry:
    @functools.lru_cache(maxsize=None)  # expect: LL301
    def lookup(self, key):
        return key.lower()

class Frames(torch.utils.data.Dataset):
    @functools.lru_cache(maxsize=4096)  # expect: LL301
    def load(self, index):
        return open(f"frame_{index}.bin", "rb").read()
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """`functools.lru_cache` on an encoder method: each new text keeps its output and graph, vs a
        dict of pooled, detached embeddings computed under `no_grad`."""

        def setup(self, ctx):
            import functools

            import torch

            class Encoder:
                def __init__(self, device):
                    self.device = device
                    self.model = torch.nn.Sequential(torch.nn.Embedding(1000, 128), torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128)).to(device)
                    self._cache = {}
                def tokens(self, text):
                    return torch.tensor([(sum(map(ord, text)) * 31 + i) % 1000 for i in range(64)], device=self.device)
                @functools.lru_cache(maxsize=None)  # noqa: LL301 (the leaky variant)
                def embed(self, text):
                    return self.model(self.tokens(text)).mean(0)
                def embed_fixed(self, text):
                    if text not in self._cache:
                        with torch.no_grad():
                            self._cache[text] = self.model(self.tokens(text)).mean(0)
                    return self._cache[text]

            ctx.encoder = Encoder(ctx.device)
            ctx.step = 0

        def leaky(self, ctx):
            ctx.step += 1
            ctx.encoder.embed(f"text {ctx.step}")

        def fixed(self, ctx):
            ctx.step += 1
            ctx.encoder.embed_fixed(f"text {ctx.step}")


# --- detection ------------------------------------------------------------------------------------
_LRU_CACHE = frozenset({"functools.lru_cache"})
_CACHE = frozenset({"functools.cache"})
#: A bounded cache above this many entries is treated like an unbounded one: at a few MB per
#: cached tensor (a mask, a positional table, an embedding batch) it can hold gigabytes.
LARGE_MAXSIZE = 1024
_DEFAULT_MAXSIZE = 128
_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
#: The same finding under other linters' names: a suppression for one already says "I know".
_OTHER_LINTER_CODES = ("B019", "W1518", "method-cache-max-size-none", "cached-instance-method")
_TENSOR_ANNOTATIONS = frozenset(
    {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"}
)


@dataclass(frozen=True)
class CacheDecorator:
    """A ``@lru_cache`` / ``@cache`` decorator and its bound (None: unbounded; -1: not a literal)."""

    decorator: cst.Decorator
    maxsize: int | None
    spelled: str

    @property
    def unbounded(self) -> bool:
        return self.maxsize is None

    @property
    def large(self) -> bool:
        return self.maxsize is None or self.maxsize > LARGE_MAXSIZE


def cache_decorator(function: cst.FunctionDef, facts: ModuleFacts) -> CacheDecorator | None:
    """The functools cache decorating ``function``, through any import alias."""
    for decorator in function.decorators:
        expr = decorator.decorator
        call = expr if isinstance(expr, cst.Call) else None
        qualified = facts.imports.resolve(call.func if call is not None else expr)
        if qualified in _CACHE:
            return CacheDecorator(decorator, None, "@" + facts.describe(expr))
        if qualified in _LRU_CACHE:
            return CacheDecorator(decorator, _maxsize(call), "@" + facts.describe(expr))
    return None


def _maxsize(call: cst.Call | None) -> int | None:
    """``@lru_cache`` / ``@lru_cache()`` -> 128; ``maxsize=None`` -> None; a non-literal -> -1."""
    if call is None:
        return _DEFAULT_MAXSIZE
    for position, arg in enumerate(call.args):
        if arg.star:
            return -1
        is_size = arg.keyword.value == "maxsize" if arg.keyword is not None else position == 0
        if not is_size:
            continue
        if isinstance(arg.value, cst.Name) and arg.value.value == "None":
            return None
        if isinstance(arg.value, cst.Integer):
            return int(arg.value.value.replace("_", ""), 0)
        return -1
    return _DEFAULT_MAXSIZE


def _suppressed_elsewhere(function: cst.FunctionDef, cache: CacheDecorator) -> bool:
    """``# noqa: B019`` (flake8-bugbear, Ruff) or pylint's W1518 on the decorator or the ``def`` line."""
    comments = [cache.decorator.trailing_whitespace.comment]
    header = function.body.header if isinstance(function.body, cst.IndentedBlock) else None
    comments.append(header.comment if header is not None else None)
    texts = [comment.value for comment in comments if comment is not None]
    return any(code in text for text in texts for code in _OTHER_LINTER_CODES)


def _is_enum(cls: ClassInfo, facts: ModuleFacts) -> bool:
    if any(facts.imports.qualify(base) in _ENUM_BASES for base in cls.base_names):
        return True
    return any(_is_enum(base, facts) for base in cls.local_bases)


def _is_dataset(cls: ClassInfo, facts: ModuleFacts) -> bool:
    if any((facts.imports.qualify(base) or "").startswith("torch.utils.data") for base in cls.base_names):
        return True
    return any(_is_dataset(base, facts) for base in cls.local_bases)


def _is_test_code(info: FunctionInfo) -> bool:
    """pytest functions and test classes (``class TestX:`` or ``class TestX(unittest.TestCase)``), not a
    ``TestTimeAugmentation(nn.Module)``."""
    if info.name.startswith("test_"):
        return True
    cls = info.cls
    return bool(
        cls
        and cls.name.startswith("Test")
        and (not cls.base_names or any(base.endswith("TestCase") for base in cls.base_names))
    )


def _holds_model(cls: ClassInfo, facts: ModuleFacts) -> str | None:
    """Why instances of ``cls`` are heavy: an nn.Module, or an attribute that holds a model, a
    trainer or a pipeline, directly or through an object its constructor is given
    (``BatchWorld(InnerWorld(agent))`` where the agent holds the model)."""
    if cls.is_module:
        return f"{cls.name} is an nn.Module: its parameters are never freed"
    reason = model_holders(facts).get(cls)
    if reason is not None:
        return f"{cls.name} {reason}, which is never freed"
    return None


def _returns_tensor(info: FunctionInfo, facts: ModuleFacts) -> str | None:
    """How we know the function returns a tensor: a model output, a torch result, an annotation."""
    node = info.node
    assert node is not None
    if node.returns is not None and facts.imports.resolve(node.returns.annotation) in _TENSOR_ANNOTATIONS:
        return "tensor"
    found = None
    for current in walk(node.body, into=not_into_scopes):
        if not isinstance(current, cst.Return) or current.value is None:
            continue
        value = facts.value(current.value)
        if value.kind is Kind.GRAPH and value.evidence is Evidence.MODEL:
            return "model output"
        if _is_tensor(current.value, facts):
            found = "tensor"
        elif found is None and _loaded(current.value, info, facts, 0):
            found = "loaded object (tensor, state dict or model)"
    return found


def _loaded(expr: cst.BaseExpression, info: FunctionInfo, facts: ModuleFacts, depth: int) -> bool:
    """``torch.load(path)`` (also ``torch.load(p)["state_dict"]``, ``torch.load(p).to(device)``, or
    a name bound to one): the analysis cannot tell a tensor from a state dict or a whole model,
    but each of them is as heavy as a tensor to keep in a cache."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and facts.imports.resolve(expr.func) is None:
            expr = expr.func.value  # .to(device), .float(), .eval()
        else:
            break
    if isinstance(expr, cst.Call):
        return facts.imports.resolve(expr.func) in torch_api.LOADERS_OF_ANYTHING
    if isinstance(expr, cst.Name) and depth < 2:
        return any(_loaded(value, info, facts, depth + 1) for value in facts.index.assigned_values(info, expr.value))
    return False


def _is_tensor(expr: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """A tensor by the shared analysis, or arithmetic of a tensor with an unknown (``decay ** t``)."""
    value = facts.value(expr)
    if value.kind is Kind.DETACHED or (value.kind is Kind.GRAPH and value.evidence is not Evidence.NAME):
        return True
    if value.kind is Kind.UNKNOWN and isinstance(expr, cst.BinaryOperation):
        return _is_tensor(expr.left, facts) or _is_tensor(expr.right, facts)
    if value.kind is Kind.UNKNOWN and isinstance(expr, cst.UnaryOperation):
        return _is_tensor(expr.expression, facts)
    return False


def _tensor_params(info: FunctionInfo, facts: ModuleFacts) -> list[str]:
    node = info.node
    assert node is not None
    params = (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
    return [
        p.name.value
        for p in params
        if p.annotation is not None and facts.imports.resolve(p.annotation.annotation) in _TENSOR_ANNOTATIONS
    ]


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    for node, info in facts.structure.functions.items():
        cache = cache_decorator(node, facts)
        if cache is None or _is_test_code(info) or _suppressed_elsewhere(node, cache):
            continue
        if info.parent is not None:
            continue  # a closure's cache dies with the closure
        if info.is_method and is_bound_to_object(node) and info.params[:1] == ("self",):
            finding = _method_finding(info, cache, facts)
        else:
            finding = _function_finding(info, cache, facts)
        if finding is not None:
            message, confidence = finding
            yield Violation(
                node=cache.decorator.decorator,
                message=message,
                confidence=confidence,
                statement=cache.decorator,
            )


def _method_finding(
    info: FunctionInfo, cache: CacheDecorator, facts: ModuleFacts
) -> tuple[str, Confidence] | None:
    cls = info.cls
    assert cls is not None
    if _is_enum(cls, facts):
        return None
    heavy = _holds_model(cls, facts)
    returns = _returns_tensor(info, facts)
    size = "an unbounded" if cache.unbounded else "a class-level"
    message = (
        f"{cache.spelled} on method '{cls.name}.{info.name}' keeps every '{cls.name}' instance it "
        f"was called on alive in {size} cache"
    )
    if heavy:
        message += f" ({heavy})"
        if returns and cache.unbounded:
            message += f", and every {returns} it returned"
        return message, Confidence.HIGH
    if returns and cache.unbounded:
        return message + f", with every {returns} it returned", Confidence.HIGH
    if returns:
        bound = cache.maxsize if cache.maxsize is not None and cache.maxsize >= 0 else "maxsize"
        return message + f", with up to {bound} {returns}s it returned", Confidence.MEDIUM
    if _is_dataset(cls, facts):
        return message + f" ({cls.name} is a Dataset: its samples and every cached result stay)", Confidence.MEDIUM
    if cache.unbounded:
        message += ", with every argument and result (one entry per distinct call)"
        if _built_once(cls, facts):
            # Every instance is a module-level object that lives as long as the cache anyway, and
            # what the entries hold is plain values: nothing is kept that would otherwise go.
            return message, Confidence.LOW
        return message, Confidence.MEDIUM
    # A bounded cache on a plain object: flake8-bugbear's B019 already covers it; the memory is small.
    return message + ", with all its arguments and results", Confidence.LOW


def _function_finding(
    info: FunctionInfo, cache: CacheDecorator, facts: ModuleFacts
) -> tuple[str, Confidence] | None:
    if not cache.large:
        return None
    tensor_params = _tensor_params(info, facts)
    returns = _returns_tensor(info, facts)
    if not tensor_params and returns is None:
        return None
    if not tensor_params and _few_keys(info):
        return None  # mel_filters(device, n_mels) with n_mels asserted in {80, 128}: one entry per device
    size = "an unbounded" if cache.unbounded else f"a {cache.maxsize}-entry"
    if tensor_params:
        names = ", ".join(f"'{name}'" for name in tensor_params)
        message = (
            f"{cache.spelled} on '{info.name}' is keyed on tensor argument {names}: tensors hash by "
            f"identity, so every call adds an entry that pins the tensor in {size} cache"
        )
        return message, Confidence.HIGH if cache.unbounded else Confidence.MEDIUM
    message = f"{cache.spelled} on '{info.name}' keeps every {returns} it returns alive in {size} cache"
    if returns == "model output" and cache.unbounded:
        return message + " (one per distinct argument, forever)", Confidence.HIGH
    return message + " (one per distinct argument)", Confidence.MEDIUM


def _few_keys(info: FunctionInfo) -> bool:
    """Every parameter takes a handful of values, so the cache holds a handful of entries: a device
    (read only as the target of ``.to(p)``, ``.cuda(p)`` or a ``device=p`` argument: one value per
    accelerator), or a value the function asserts to be one of a few literals (``assert n in {80,
    128}``, ``assert n == 80``, ``if n not in (80, 128): raise ...``)."""
    node = info.node
    assert node is not None
    params = [p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)]
    if not params or node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or node.params.star_kwarg is not None:
        return False
    checked = _checked_against_literals(node)
    return all(name in checked or _only_a_device(node, name) for name in params)


def _checked_against_literals(node: cst.FunctionDef) -> set[str]:
    """Names the function asserts (or raises unless) equal to, or among, literals."""
    found: set[str] = set()
    for current in walk(node.body, into=not_into_scopes):
        test = None
        if isinstance(current, cst.Assert):
            test, negated = current.test, False
        elif isinstance(current, cst.If) and _raises(current.body):
            test, negated = current.test, True
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.left, cst.Name):
            continue
        comparison = test.comparisons[0]
        operator = comparison.operator
        wanted = (cst.NotIn, cst.NotEqual) if negated else (cst.In, cst.Equal)
        if isinstance(operator, wanted) and _literals(comparison.comparator):
            found.add(test.left.value)
    return found


def _raises(body: cst.BaseSuite) -> bool:
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    return any(isinstance(small, cst.Raise) for line in statements if isinstance(line, cst.SimpleStatementLine) for small in line.body)


def _literals(expr: cst.BaseExpression) -> bool:
    """A literal, or a tuple, list or set of literals."""
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return bool(expr.elements) and all(_literals(element.value) for element in expr.elements)
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString))


def _only_a_device(node: cst.FunctionDef, name: str) -> bool:
    """Every read of ``name`` in the body is the device argument of a move or a factory."""
    devices: set[cst.CSTNode] = set()
    keywords: set[cst.CSTNode] = set()  # the ``device`` of ``device=...`` is no read
    reads = 0
    for current in walk(node.body, into=not_into_scopes):
        if isinstance(current, cst.Call):
            func = current.func
            moving = isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda")
            for position, arg in enumerate(current.args):
                if arg.keyword is not None:
                    keywords.add(arg.keyword)
                if isinstance(arg.value, cst.Name) and arg.value.value == name:
                    keyword = arg.keyword.value if arg.keyword is not None else None
                    if keyword == "device" or (moving and keyword is None and position == 0):
                        devices.add(arg.value)
        elif isinstance(current, cst.Name) and current.value == name and current not in keywords:
            reads += 1
    return reads > 0 and reads == len(devices)


def _built_once(cls: ClassInfo, facts: ModuleFacts) -> bool:
    """The file builds instances of ``cls`` (at least one) only in its top-level code, outside any
    loop: module-level objects, alive until the program ends whatever caches them."""
    places = facts.index.calls_named(cls.name)
    constructions = [place for place in places if isinstance(place.node, cst.Call) and dotted_name(place.node.func) == cls.name]
    return bool(constructions) and all(place.scope is None and not place.loops for place in constructions)
