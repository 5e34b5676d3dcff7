"""LL301 cache-holds-tensors: functools caches that keep models, instances or tensors alive forever."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class CacheHoldsTensors(Rule):
    code = "LL301"
    name = "cache-holds-tensors"
    severity = Severity.LEAK
    summary = "A functools cache on a method or a tensor function keeps instances, models or tensors alive forever."
    help = (
        "cache per instance (functools.cached_property, or a dict on self), bound the cache "
        "(lru_cache(maxsize=...)), or key it on plain values and return detached CPU copies"
    )
    requires_any = ("functools", "lru_cache")  # the caches are resolved through their functools import
    docs = """
## What it finds
`functools.lru_cache` and `functools.cache` (under any import alias: `from functools import
lru_cache`, `import functools as ft`) used as a decorator on

- a **method** (first parameter `self`, not a `@staticmethod`): the cache lives on the class and
  keeps every `self` it has seen, with every argument and result. flake8-bugbear's B019 and
  pylint's W1518 report the same thing for all Python code; here it is reported with high
  confidence when the instance is heavy — an `nn.Module`, or a class that holds a model in an
  attribute — or when the cache is unbounded and returns tensors;
- a **function** that takes tensors (parameters annotated `torch.Tensor`) or returns them (a model
  output, the result of a torch function, a `-> torch.Tensor` annotation, or what `torch.load` /
  `torch.jit.load` returns — a tensor, a state dict or a whole model, each as heavy to keep), when
  the cache is unbounded (`@cache`, `lru_cache(maxsize=None)`) or larger than 1024 entries.

Tensor arguments make it worse: tensors hash by identity, so every call with a new batch misses
the cache and adds an entry that pins that batch (and the result) until the process exits.

Confidence: high for a method of a heavy class, an unbounded method cache returning tensors, and an
unbounded function cache keyed on tensors or returning model outputs; medium for bounded method
caches returning tensors, method caches on `Dataset` subclasses, unbounded method caches, and
unbounded (or > 1024) function caches returning tensors from plain keys; low for bounded caches on
methods of plain classes.

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
A bounded `lru_cache` (the default 128 entries, up to 1024) on a function that returns tensors is
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

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """The caches are ``functools.lru_cache`` and ``functools.cache``, under any alias."""
        return shape.uses("lru_cache") or (shape.uses("cache") and shape.mentions("functools"))

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll301_cache_holds_tensors import check

        return check(facts)

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
