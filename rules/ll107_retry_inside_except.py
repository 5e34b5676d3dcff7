"""LL107 retry-inside-except: recovering from an out-of-memory error inside the ``except`` clause."""

from __future__ import annotations

import ast
import re
from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.calls import call_graph, local_callee
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import FunctionInfo, backward_target, bound_names
from leaklint.analysis.torch_api import TORCH_CODE
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Syntax
from leaklint.rule import Measured, Rule, Violation


class RetryInsideExcept(Rule):
    code = "LL107"
    name = "retry-inside-except"
    severity = Severity.PEAK
    summary = "Work is retried inside an except clause for out-of-memory errors, while the failed step is still alive."
    help = "set a flag in the except clause (oom = True) and retry after the try statement"
    needs = TORCH_CODE & Syntax(ast.ExceptHandler)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(1, 0, 0), leaks=(0, 0))
    docs = """
## What it finds
An `except` clause that catches an out-of-memory error — `torch.cuda.OutOfMemoryError`,
`torch.OutOfMemoryError`, `MemoryError`, or `RuntimeError`/`Exception`/a bare `except:` whose body
checks for "out of memory" (or calls an `is_oom(...)`-style helper) — and, inside the clause, runs
something that allocates again: a model forward, a `.backward()`, an optimizer step, the enclosing
function itself (recursive retry), a function of the same file that does one of those, or (for a
function defined elsewhere, such as `run_model`) the same call the `try` body made. In a clause
that catches out-of-memory errors by name, also a fallback that computes the `try` body's result
again another way: an assignment, from a function of the file, to a name the `try` body computed
with a function of the file (`out = sliced_attention(q, k, v)` after `out =
full_attention(q, k, v)` ran out of memory; a torch operator that fails leaves no frame of its
own, and a placeholder such as `torch.zeros(n)` is no computation). Generic
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
model (`torch.load(path)` retried with `map_location="cpu"`), nor a catch-all that neither frees
memory first (`empty_cache()`, `gc.collect()`, `del`), nor splits the work (a loop, `n // 2`,
`split`/`chunk`), nor catches a failed training step (a backward or an optimizer step): that is a
chain of fallbacks (one checkpoint layout after another), not a retry. A helper of the same file called in
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
        # the fallback runs after the handler, once the exception is released; a handler that
        # only records a placeholder result
        """
import torch
import torch.nn.functional as F

def attention(q, k, v):
    failed = False
    try:
        out = F.scaled_dot_product_attention(q, k, v)
    except torch.cuda.OutOfMemoryError:
        failed = True
    if failed:
        out = chunked_attention(q, k, v)
    return out

def score(model, batch):
    try:
        loss = model(batch).mean().item()
    except torch.cuda.OutOfMemoryError:
        loss = float("nan")
    return loss

def chunked_attention(q, k, v, chunk=1024):
    return torch.cat([F.scaled_dot_product_attention(q[:, :, i:i + chunk], k, v) for i in range(0, q.shape[2], chunk)], dim=2)

def fused(q, k, v):
    try:
        out = F.scaled_dot_product_attention(q, k, v)
    except torch.cuda.OutOfMemoryError:
        out = chunked_attention(q, k, v)
    return out

def pick_device():
    return "cpu"

def encode(encoder, texts):
    return encoder(texts).mean(1)

def embed_all(encoder, texts):
    try:
        vectors = encode(encoder, texts)
    except torch.cuda.OutOfMemoryError:
        vectors = torch.zeros(len(texts), 768, device=pick_device())
    return vectors
""",
        """
import torch
from transformers import CLIPTextModel, T5EncoderModel
def load_text_encoder(model, input_dir):
    try:
        loaded = CLIPTextModel.from_pretrained(input_dir, subfolder="text_encoder")
        model(**loaded.config)
    except Exception:
        loaded = T5EncoderModel.from_pretrained(input_dir, subfolder="text_encoder_2")
        model(**loaded.config)
    model.load_state_dict(loaded.state_dict())
""",
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
        # a fallback computed inside the handler: the failed attention helper's frame, with the
        # scores it had allocated, is still alive in the traceback
        """
import torch
import torch.nn.functional as F

def full_attention(q, k, v):
    scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
    return scores.softmax(-1) @ v

def chunked_attention(q, k, v, chunk=1024):
    return torch.cat([F.scaled_dot_product_attention(q[:, :, i:i + chunk], k, v) for i in range(0, q.shape[2], chunk)], dim=2)

def attention(q, k, v):
    try:
        out = full_attention(q, k, v)
    except torch.cuda.OutOfMemoryError:
        out = chunked_attention(q, k, v)  # expect: LL107
    return out
""",
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

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

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


# --- detection ------------------------------------------------------------------------------------
#: Exception classes that are out-of-memory errors (matched on the qualified or written name).
_OOM_EXCEPTION = re.compile(r"(^|\.)(OutOfMemoryError|MemoryError)$")
#: Catch-alls that also catch out-of-memory errors.
_GENERIC_EXCEPTIONS = frozenset({"RuntimeError", "Exception", "BaseException"})
#: Text that an out-of-memory check compares the message with.
_OOM_TEXT = re.compile(r"out of memory|\boom\b|can't allocate|cannot allocate|CUDNN_STATUS_NOT_SUPPORTED", re.I)
#: Helpers that classify an exception as out-of-memory (accelerate, torchtnt, espnet, own code).
_OOM_PREDICATE = re.compile(r"(is_)?(cuda_)?(out_of_memory|oom)(_error|_exception)?$|should_reduce_batch_size$", re.I)
#: Calls that neither allocate nor retry: logging, cache clearing, bookkeeping.
_HARMLESS_CALLS = re.compile(
    r"^(print|len|str|repr|int|float|bool|range|isinstance|hasattr|getattr|setattr|type|format|min|max|"
    r"sum|abs|round|sorted|list|tuple|dict|set|iter|next|enumerate|zip)$"
    r"|(^|\.)(log|debug|info|warning|warn|error|exception|critical|write|flush|format|append|extend|"
    r"empty_cache|collect|synchronize|reset_peak_memory_stats|memory_summary|memory_allocated|"
    r"max_memory_allocated|memory_reserved|zero_grad|sleep|exit|item|clear|pop|update|add_scalar|"
    r"set_description|set_postfix|barrier|get|keys|values|items|join|startswith|endswith|lower|upper|"
    r"to|cuda|cpu|half|float|eval|train|state_dict|load_state_dict|save|save_checkpoint)$"
)


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    allocating: set[FunctionInfo] | None = None
    model_calls: set[cst.Call] = set()
    for node in walk(facts.module, into=_statements_only):
        if not isinstance(node, (cst.Try, cst.TryStar)):
            continue
        handlers = [h for h in node.handlers if _handler_kind(h, facts) is not None]
        if not handlers:
            continue
        if allocating is None:
            allocating = _allocating_functions(facts)
            model_calls = {call.node for call in facts.model_calls()}
        tried = _callees(node.body)
        for handler in handlers:
            violation = _check_handler(handler, node, tried, allocating, model_calls, facts)
            if violation is not None:
                yield violation


def _statements_only(node: cst.CSTNode) -> bool:
    """Walk statements, not expressions: ``try`` only appears at statement level."""
    return not isinstance(node, (cst.SimpleStatementLine, cst.BaseExpression, cst.Decorator, cst.Parameters))


def _check_handler(
    handler: cst.ExceptHandler | cst.ExceptStarHandler,
    try_node: cst.Try | cst.TryStar,
    tried: set[str],
    allocating: set[FunctionInfo],
    model_calls: set[cst.Call],
    facts: ModuleFacts,
) -> Violation | None:
    kind = _handler_kind(handler, facts)
    if kind is None:
        return None
    statements = list(_small_statements(handler.body))
    function = _enclosing_function(statements, facts)
    found = None
    for small, line in statements:
        for call in calls_in(small):
            reason = _allocation(call, function, tried, allocating, model_calls, facts)
            if reason is not None:
                found = (call, line, reason)
                break
        if found is not None:
            break
    if found is None and _catches_oom_by_name(handler, facts):
        found = _recomputes_result(statements, try_node.body, function, facts)
    if found is None:
        return None
    call, line, reason = found
    if kind == "oom":
        confidence, caught = Confidence.HIGH, "an out-of-memory error"
    else:
        if not _allocates(try_node.body, function, allocating, model_calls, facts):
            return None  # a catch-all around loading or parsing: a fallback, not an OOM retry
        if not (_trains(try_node.body, facts) or _frees_memory(handler.body, facts) or _splits_the_work(handler.body)):
            return None  # a chain of fallbacks (one checkpoint layout after another), not a retry
        confidence, caught = Confidence.MEDIUM, f"'{_caught_text(handler, facts)}' (which includes out-of-memory errors)"
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' {reason} inside the except clause for {caught}; the exception's "
            "traceback keeps the failed step's frames and tensors alive, so this allocates on top of them"
        ),
        confidence=confidence,
        statement=line,
    )


def _handler_kind(handler: cst.ExceptHandler | cst.ExceptStarHandler, facts: ModuleFacts) -> str | None:
    """"oom" for a clause that is about running out of memory, "generic" for a catch-all, else None."""
    types = _caught_types(handler)
    if not types:
        kind = "generic"  # a bare except:
    else:
        if _catches_oom_by_name(handler, facts):
            return "oom"
        names = [facts.imports.resolve(t) or dotted_name(t) or "" for t in types]
        if not any(name.rsplit(".", 1)[-1] in _GENERIC_EXCEPTIONS for name in names):
            return None
        kind = "generic"
    return "oom" if _checks_for_oom(handler.body) else kind


def _caught_types(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> list[cst.BaseExpression]:
    if handler.type is None:
        return []
    if isinstance(handler.type, cst.Tuple):
        return [element.value for element in handler.type.elements]
    return [handler.type]


def _caught_text(handler: cst.ExceptHandler | cst.ExceptStarHandler, facts: ModuleFacts) -> str:
    return f"except {facts.describe(handler.type)}" if handler.type is not None else "except:"


def _checks_for_oom(body: cst.BaseSuite) -> bool:
    """The clause compares the message with "out of memory" or asks an ``is_oom(e)`` helper."""
    for node in walk(body, into=not_into_scopes):
        if isinstance(node, cst.SimpleString) and _OOM_TEXT.search(node.value):
            return True
        if isinstance(node, cst.FormattedStringText) and _OOM_TEXT.search(node.value):
            return True
        if isinstance(node, cst.Call):
            name = dotted_name(node.func) or ""
            if _OOM_PREDICATE.search(name.rsplit(".", 1)[-1]):
                return True
    return False


def _small_statements(body: cst.BaseSuite) -> Iterator[tuple[cst.BaseSmallStatement, cst.CSTNode]]:
    """Every simple statement of a block, in order, with the line holding it (nested defs skipped)."""
    if isinstance(body, cst.SimpleStatementSuite):
        for small in body.body:
            yield small, body
        return
    for statement in body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                yield small, statement
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            for child in _blocks(statement):
                yield from _small_statements(child)


def _blocks(statement: cst.BaseCompoundStatement) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement, in source order."""
    yield statement.body
    if isinstance(statement, cst.If) and statement.orelse is not None:
        if isinstance(statement.orelse, cst.If):
            yield from _blocks(statement.orelse)
        else:
            yield statement.orelse.body
    elif isinstance(statement, (cst.For, cst.While)) and statement.orelse is not None:
        yield statement.orelse.body
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        for handler in statement.handlers:
            yield handler.body
        if statement.orelse is not None:
            yield statement.orelse.body
        if statement.finalbody is not None:
            yield statement.finalbody.body
    elif isinstance(statement, cst.Match):
        for case in statement.cases:
            yield case.body


def _enclosing_function(statements: list[tuple[cst.BaseSmallStatement, cst.CSTNode]], facts: ModuleFacts) -> FunctionInfo:
    for small, _ in statements:
        fact = facts.statement_fact(small)
        if fact is not None:
            return fact.function
    return facts.structure.top


def _recomputes_result(
    statements: list[tuple[cst.BaseSmallStatement, cst.CSTNode]], tried: cst.BaseSuite, function: FunctionInfo, facts: ModuleFacts
) -> tuple[cst.Call, cst.CSTNode, str] | None:
    """A fallback for what ran out of memory: the ``try`` body computed a name with a function of
    the file (whose frames, and the tensors in them, the traceback keeps), and the clause
    assigns the same name from another call of a function of the file (``out = attention(q, k,
    v)`` / ``out = sliced_attention(q, k, v)``). A torch operator that fails leaves no frame of
    its own, and a placeholder (``torch.zeros(n, device=pick())``) is no computation."""
    computed = {
        name
        for small, _ in _small_statements(tried)
        if _computed_by_file_function(small, function, facts)
        for name in _assigned_names(small)
    }
    for small, line in statements:
        names = sorted(_assigned_names(small) & computed)
        if names and _computed_by_file_function(small, function, facts):
            return small.value, line, f"computes '{names[0]}' again (what the try body ran out of memory computing)"  # type: ignore[attr-defined, return-value]
    return None


def _computed_by_file_function(small: cst.BaseSmallStatement, function: FunctionInfo, facts: ModuleFacts) -> bool:
    """``name = helper(...)`` (or ``helper(...).reshape(...)``) where ``helper`` is a function of this file."""
    value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
    while isinstance(value, cst.Call) and local_callee(value, function, facts) is None and isinstance(value.func, cst.Attribute):
        value = value.func.value  # a method called on the helper's result
    return isinstance(value, cst.Call) and local_callee(value, function, facts) is not None


def _catches_oom_by_name(handler: cst.ExceptHandler | cst.ExceptStarHandler, facts: ModuleFacts) -> bool:
    """The clause names an out-of-memory exception type (``torch.cuda.OutOfMemoryError``)."""
    return any(_OOM_EXCEPTION.search(facts.imports.resolve(t) or dotted_name(t) or "") for t in _caught_types(handler))


def _assigned_names(small: cst.BaseSmallStatement) -> set[str]:
    """The plain names an assignment statement binds (not attributes or items)."""
    if isinstance(small, cst.Assign):
        targets = [target.target for target in small.targets]
    elif isinstance(small, cst.AnnAssign):
        targets = [small.target]
    else:
        return set()
    return {name for target in targets for name in bound_names(target) if "." not in name}


def _callees(body: cst.BaseSuite) -> set[str]:
    """Dotted names of the functions a block calls (what a retry would call again)."""
    names = set()
    for small, _ in _small_statements(body):
        for call in calls_in(small):
            name = dotted_name(call.func)
            if name is not None and not _HARMLESS_CALLS.search(name):
                names.add(name)
    return names


def _allocation(
    call: cst.Call,
    function: FunctionInfo,
    tried: set[str],
    allocating: set[FunctionInfo],
    model_calls: set[cst.Call],
    facts: ModuleFacts,
) -> str | None:
    """Why ``call`` allocates again (a short phrase for the message), or None."""
    if backward_target(call, facts.imports) is not None:
        return "runs backward"
    if _is_optimizer_step(call):
        return "steps the optimizer"
    if call in model_calls:
        return "runs the model"
    callee = local_callee(call, function, facts)
    if callee is not None:
        # a function of this file is judged by what it does, not by being called twice
        if callee is function:
            return "retries the function recursively"
        return f"runs '{callee.name}' (which runs the model or backward)" if callee in allocating else None
    name = dotted_name(call.func)
    if name is not None and name in tried:
        return "retries the call"
    return None


def _is_optimizer_step(call: cst.Call) -> bool:
    """``optimizer.step()`` / ``scaler.step(optimizer)`` (not a scheduler's step)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
        return False
    receiver = (dotted_name(func.value) or "").rsplit(".", 1)[-1]
    if re.search("sched", receiver, re.I):
        return False
    if torch_api.OPTIMIZER_NAME.search(receiver):
        return True
    return any(torch_api.OPTIMIZER_NAME.search((dotted_name(a.value) or "").rsplit(".", 1)[-1]) for a in call.args)


def _trains(body: cst.BaseSuite, facts: ModuleFacts) -> bool:
    """The ``try`` body runs a training step: a backward or an optimizer step."""
    return any(
        backward_target(call, facts.imports) is not None or _is_optimizer_step(call)
        for small, _ in _small_statements(body)
        for call in calls_in(small)
    )


def _frees_memory(body: cst.BaseSuite, facts: ModuleFacts) -> bool:
    """The clause tries to make room first (``torch.cuda.empty_cache()``, ``gc.collect()``,
    ``del``): it expects to have run out of memory."""
    for small, _ in _small_statements(body):
        if isinstance(small, cst.Del):
            return True
        for call in calls_in(small):
            if facts.imports.resolve(call.func) in torch_api.EMPTY_CACHE or facts.imports.resolve(call.func) == torch_api.GC_COLLECT:
                return True
    return False


def _splits_the_work(body: cst.BaseSuite) -> bool:
    """The clause redoes the work in smaller pieces: a loop, a halving (``n // 2``), a
    ``split``/``chunk``: the shape of a retry after running out of memory."""
    for node in walk(body, into=not_into_scopes):
        if isinstance(node, (cst.For, cst.While)):
            return True
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("split", "chunk"):
            return True
    return False


def _allocates(body: cst.BaseSuite, function: FunctionInfo, allocating: set[FunctionInfo], model_calls: set[cst.Call], facts: ModuleFacts) -> bool:
    """The ``try`` body does work that can run out of memory (forward, backward, step, helper)."""
    for small, _ in _small_statements(body):
        for call in calls_in(small):
            if _allocation(call, function, set(), allocating, model_calls, facts) is not None:
                return True
    return False


def _allocating_functions(facts: ModuleFacts) -> set[FunctionInfo]:
    """Functions of the file that run a model forward, a backward or an optimizer step, directly
    or through another such function."""
    found = {call.statement.function for call in facts.model_calls() if call.statement is not None}
    found |= {info for info in facts.structure.functions.values() if info.backward_names}
    callers: dict[FunctionInfo, set[FunctionInfo]] = {}
    for call, fact, callee in call_graph(facts).resolved:
        caller = fact.function
        if caller.is_module_level:
            continue
        if _is_optimizer_step(call):
            found.add(caller)
        if callee is not None:
            callers.setdefault(callee, set()).add(caller)
    frontier = list(found)
    while frontier:
        for caller in callers.get(frontier.pop(), ()):
            if caller not in found:
                found.add(caller)
                frontier.append(caller)
    return found
