"""The fields of a node class of either family (:mod:`leaklint.analysis.nodes`): libcst's
dataclasses or the mirror's ``__slots__`` classes. Imports neither family."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any


def field_names(node_class: type) -> tuple[str, ...]:
    """The node fields of ``node_class``, in libcst's order."""
    mirrored = getattr(node_class, "_fields", None)
    if mirrored is not None:
        return mirrored  # type: ignore[no-any-return]
    return tuple(field.name for field in dataclasses.fields(node_class))


def field_defaults(node_class: type) -> dict[str, Any]:
    """The default value of each field that has one (a dataclass's factories are called once:
    nodes are immutable, so one default value may be shared)."""
    if not dataclasses.is_dataclass(node_class):  # a mirror class: its __init__ holds them
        parameters = inspect.signature(node_class).parameters
        return {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}
    found: dict[str, Any] = {}
    for field in dataclasses.fields(node_class):
        if field.default is not dataclasses.MISSING:
            found[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            found[field.name] = field.default_factory()
    return found
