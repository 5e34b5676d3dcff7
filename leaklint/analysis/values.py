"""The abstract values the provenance pass computes: is this a tensor that drags a graph along?

A :class:`Value` answers the question rules ask ("is ``loss`` attached to an autograd graph
here, and how do we know?") and carries what they need to explain it: the evidence, a confidence,
the local names it was computed from, and whether it is a freshly computed tensor (safe to
overwrite in place) or may share storage with something else.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, TypeVar

from leaklint.findings import Confidence


T = TypeVar("T")


def replace(obj: T, /, **changes: Any) -> T:
    """``dataclasses.replace`` for the analysis's own dataclasses (no ``__post_init__``, no slots),
    without re-running ``__init__``: the analysis makes ~10^5 copies per file, and
    ``dataclasses.replace`` was a tenth of its time."""
    new = object.__new__(type(obj))
    attributes = new.__dict__
    attributes.update(obj.__dict__, **changes)
    # A misspelt field would add an attribute. (Cheaper than comparing the key sets up front.)
    if len(attributes) != len(obj.__dict__):
        raise AssertionError(f"not fields of {type(obj).__name__}: {sorted(changes.keys() - obj.__dict__.keys())}")
    return new


class Kind(enum.IntEnum):
    """Ordered so that joining two possibilities keeps the more dangerous one."""

    NOT_TENSOR = 0  # a Python number, string, None...
    DETACHED = 1  # a tensor with no autograd history
    UNKNOWN = 2  # could be anything
    GRAPH = 3  # a tensor (or a container of tensors) with autograd history


class Device(enum.IntEnum):
    """Where a tensor's storage lives, as far as the code shows; ordered so that joining two
    possibilities keeps the one on the accelerator (:mod:`leaklint.analysis.device` decides)."""

    HOST = 0  # made on the CPU, or moved there (``.cpu()``, ``.to("cpu")``)
    UNKNOWN = 1
    #: On the accelerator on some paths, on the host on others (``if use_cuda: x = x.cuda()``):
    #: the code chooses, deliberately.
    EITHER = 2
    ACCELERATOR = 3  # moved to or made on a device (``.cuda()``, ``.to(device)``, a model there)


class Evidence(enum.Enum):
    """Why a value is believed to be graph-attached, strongest first."""

    BACKWARD = "backward is called on it"
    LOSS = "it is a loss"
    MODEL = "it is a model output"
    DERIVED = "it is computed from a graph-attached value"
    NAME = "its name suggests it"


class Role(enum.Enum):
    """What a non-tensor object is, where that matters."""

    MODEL = "model"
    #: A model whose parameters were frozen (``.requires_grad_(False)``): calling it records a
    #: graph only through its inputs.
    FROZEN_MODEL = "frozen model"
    LOSS_FN = "loss function"
    LOADER = "data loader"
    OPTIMIZER = "optimizer"
    FUNCTION = "local function"
    INSTANCE = "instance of a class in the file"
    #: A dataset of torch or torchvision (``torchvision.datasets.CIFAR10(...)``): it yields samples.
    DATASET = "dataset"


@dataclass(frozen=True)
class Value:
    kind: Kind
    confidence: Confidence = Confidence.LOW
    evidence: Evidence | None = None
    role: Role | None = None
    #: Local names (and dotted ``self.x`` names) this value was computed from.
    deps: frozenset[str] = frozenset()
    #: A tensor created by this very computation: nothing else can see its storage.
    fresh: bool = False
    #: Element values when the value is a tuple/list of known length (for unpacking).
    items: tuple[Value, ...] | None = None
    #: Short source text of where the value came from, for messages.
    origin: str = field(default="", compare=False)
    #: For ``Role.INSTANCE`` (and a ``Role.MODEL`` built from a module class of the file): the
    #: ``ClassInfo`` of the class in this file it was built from.
    cls: object = field(default=None, compare=False)
    #: For a dict whose keys are literals (``{"loss": loss, "n": x.size(0)}``): (key, value) pairs,
    #: so ``d["n"]`` is known not to carry the graph that ``d["loss"]`` does.
    fields: tuple[tuple[object, Value], ...] | None = None
    #: Graph-attached only through what the function's callers pass (a parameter that the calls in
    #: the file give a graph): whoever keeps it here keeps the caller's graph, and the call is
    #: where the graph enters (rules report a store of it at the call when it crosses into another
    #: class).
    from_caller: bool = False
    #: For a container whose items the code makes from a class of the file
    #: (``defaultdict(AverageMeter)``, ``meters[name] = AverageMeter()``): what ``c[key]`` is.
    element: Value | None = None
    #: Where the tensor (or the tensors a container or model holds) lives: see ``analysis.device``.
    device: Device = Device.UNKNOWN
    #: A backward without ``retain_graph`` has run on this very tensor (``loss.backward()``,
    #: ``scaler.scale(loss).backward()``, ``(loss / accum).backward()``): autograd freed the saved
    #: tensors of its graph, so what still holds it keeps the tensor and a few graph nodes, not a
    #: step's activations. Set on the names the backward differentiates (not on what it only ran
    #: through); what is computed from the tensor afterwards is new.
    backpropagated: bool = False
    #: For ``Role.FUNCTION``: the ``def`` it is, where the code shows which (a nested function
    #: its maker returns: ``policy = make_policy(model)``), so a call of it is followed there.
    function: object = field(default=None, compare=False)
    #: An iterator over what it walks (``iter(loader)``, ``enumerate(loader)``, a generator over
    #: a loader), not the iterable itself: a second pass over it finds it exhausted.
    iterator: bool = False

    @property
    def is_graph(self) -> bool:
        return self.kind is Kind.GRAPH

    @property
    def is_plain_tensor(self) -> bool:
        """A tensor as such: not a model or loader (a role), not a dict or tuple of values. Writing
        into part of one (``self.memory[idx] = m``) changes that tensor; autograd records it."""
        return self.role is None and self.kind in (Kind.DETACHED, Kind.GRAPH) and self.fields is None and self.items is None

    def with_deps(self, names: frozenset[str]) -> Value:
        return replace(self, deps=self.deps | names) if names - self.deps else self

    def with_dep(self, name: str) -> Value:
        """``with_deps(frozenset({name}))`` without building a set: the pass calls it per name read."""
        if name in self.deps:
            return self
        new = object.__new__(type(self))  # replace() without its keyword arguments: the hottest copy
        attributes = new.__dict__
        attributes.update(self.__dict__)
        attributes["deps"] = self.deps | {name}
        return new

    def detached(self) -> Value:
        """The same computation run with gradients disabled: a tensor without history."""
        if self.kind in (Kind.GRAPH, Kind.UNKNOWN) and self.role is None:
            items = tuple(item.detached() for item in self.items) if self.items is not None else None
            fields = tuple((key, value.detached()) for key, value in self.fields) if self.fields is not None else None
            return replace(self, kind=Kind.DETACHED, evidence=None, items=items, fields=fields)
        return self

    def field(self, key: object) -> Value | None:
        """The value of ``self[key]`` for a dict with literal keys (None: not known)."""
        if self.fields is None:
            return None
        for known, value in self.fields:
            if known == key:
                return value
        return None


NOT_TENSOR = Value(Kind.NOT_TENSOR)
UNKNOWN = Value(Kind.UNKNOWN)
DETACHED = Value(Kind.DETACHED)


def graph(evidence: Evidence, confidence: Confidence, origin: str = "", deps: frozenset[str] = frozenset(), fresh: bool = True) -> Value:
    return Value(Kind.GRAPH, confidence, evidence, None, deps, fresh, None, origin)


def role(role: Role, confidence: Confidence, origin: str = "") -> Value:
    return Value(Kind.UNKNOWN, confidence, None, role, frozenset(), False, None, origin)


def function_value(name: str, function: object) -> Value:
    """A function of the file, ``function`` its ``def`` node."""
    return Value(Kind.UNKNOWN, Confidence.HIGH, None, Role.FUNCTION, frozenset(), False, None, name, function=function)


def instance(cls: object) -> Value:
    """An object built from a (non-module) class defined in the file, e.g. an ``AverageMeter``."""
    return Value(Kind.UNKNOWN, Confidence.HIGH, None, Role.INSTANCE, cls=cls)


def strongest_graph(values: list[Value]) -> Value | None:
    """The graph-attached value with the best evidence and confidence, if any."""
    graphs = [v for v in values if v.is_graph]
    if not graphs:
        return None
    order = list(Evidence)
    return max(graphs, key=lambda v: (v.confidence.rank, -order.index(v.evidence) if v.evidence else -99))


def combine(values: list[Value], *, origin: str = "", fresh: bool = True) -> Value:
    """The result of an operation on ``values`` (arithmetic, torch functions, containers)."""
    deps = frozenset().union(*(v.deps for v in values)) if values else frozenset()
    strongest = strongest_graph(values)
    if strongest is not None:
        evidence = strongest.evidence if strongest.evidence in (Evidence.BACKWARD, Evidence.NAME) else Evidence.DERIVED
        if strongest.evidence is Evidence.LOSS:
            evidence = Evidence.LOSS
        from_caller = all(v.from_caller for v in values if v.is_graph)
        return Value(Kind.GRAPH, strongest.confidence, evidence, None, deps, fresh, None, origin or strongest.origin, from_caller=from_caller)
    kind = max((v.kind for v in values if v.role is None), default=Kind.NOT_TENSOR)
    if any(v.role is not None for v in values):
        kind = max(kind, Kind.UNKNOWN)
    return Value(kind, Confidence.LOW, None, None, deps, fresh and kind is not Kind.NOT_TENSOR, None, origin)


def _join_device(a: Value, b: Value) -> Device:
    """Either value's place: a plain Python value (``preds = None`` before the first batch) has none."""
    if a.kind is Kind.NOT_TENSOR and a.role is None:
        return b.device
    if b.kind is Kind.NOT_TENSOR and b.role is None:
        return a.device
    if {a.device, b.device} == {Device.HOST, Device.ACCELERATOR}:
        return Device.EITHER
    return max(a.device, b.device)


def join(a: Value, b: Value) -> Value:
    """Either ``a`` or ``b`` (two branches, or two loop iterations)."""
    if a is b or a == b:  # joining environments mostly meets the very same value on both sides
        return a
    joined = _join(a, b)
    if joined.backpropagated or a.backpropagated or b.backpropagated:
        # backpropagated only if every path that may hold a graph ran the backward on it
        # (``return None`` on one path and the backpropagated loss on the other still is)
        flag = joined.is_graph and all(v.backpropagated for v in (a, b) if _may_hold_graph(v))
        if flag is not joined.backpropagated:
            joined = replace(joined, backpropagated=flag)
    return joined


def _may_hold_graph(value: Value) -> bool:
    return value.role is None and value.kind >= Kind.UNKNOWN


def _join(a: Value, b: Value) -> Value:
    device = _join_device(a, b)
    if a.role is not None or b.role is not None:
        if a.role == b.role:
            pick = a if a.confidence >= b.confidence else b
            return pick if pick.device is device else replace(pick, device=device)
        pick = a if a.role is not None else b
        if a.role is not None and b.role is not None and b.confidence > a.confidence:
            pick = b  # two beliefs about what the object is: the better founded one
        return replace(pick, deps=a.deps | b.deps, device=device)
    if a.kind != b.kind:
        top, other = (a, b) if a.kind > b.kind else (b, a)
        # `return None` on one path and a tuple on another: whoever unpacks the result unpacks
        # the tuple, so its elements stay known.
        items = top.items if other.kind is Kind.NOT_TENSOR and other.items is None else None
        fields = top.fields if other.kind is Kind.NOT_TENSOR and other.fields is None else None
        return replace(top, deps=a.deps | b.deps, fresh=a.fresh and b.fresh, items=items, fields=fields, device=device)
    best = a if a.confidence >= b.confidence else b
    if a.from_caller != b.from_caller and a.kind is Kind.GRAPH:
        best = replace(best, from_caller=False)  # one path makes its own graph
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    joined = replace(best, deps=a.deps | b.deps, fresh=a.fresh and b.fresh, items=items, fields=_join_fields(a.fields, b.fields), device=device)
    if a.element is not b.element:
        joined = replace(joined, element=a.element if b.element is None else b.element if a.element is None else join(a.element, b.element))
    return joined


def _join_fields(a: tuple[tuple[object, Value], ...] | None, b: tuple[tuple[object, Value], ...] | None) -> tuple[tuple[object, Value], ...] | None:
    """The keys of a dict on two paths: a key known on both gets the join of its values, a key
    set on one path only keeps that path's value."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    merged = dict(a)
    for key, value in b:
        merged[key] = join(merged[key], value) if key in merged else value
    return tuple(merged.items())


def with_fields(fields: tuple[tuple[object, Value], ...], *, deps: frozenset[str] = frozenset(), origin: str = "") -> Value:
    """A dict with literal keys holding ``fields``: as graph-attached as its most attached value."""
    result = combine([value for _, value in fields], origin=origin, fresh=False)
    return replace(result, deps=result.deps | deps, fields=fields)
