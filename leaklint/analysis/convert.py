"""Between libcst's trees and the mirror's (:mod:`leaklint.analysis.mirror_base` says why).

- :func:`to_mirror`: a parsed libcst tree as mirror nodes, each keeping its libcst node as
  ``origin``, so that positions, messages and fixes come from libcst's tree.
- :func:`to_libcst`: a mirror node as libcst's: its ``origin`` when it has one, else a new libcst
  node built field by field (nodes the screen built from ``ast``, or a rule built for a fix).
- :func:`code_for_node`: the source libcst generates for a mirror node.

Only the exact run and code generation import this module, and with it libcst. Converters are
written per class on first use, from the fields the two classes share, so a libcst that gained
or lost a field since the mirror was generated still converts.
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from leaklint.analysis import mirror
from leaklint.analysis.mirror_base import CSTNode, MaybeSentinel
from leaklint.analysis.node_fields import field_defaults, field_names
from leaklint.code_cache import compiled

_TO_MIRROR: dict[type, Callable[[Any], Any]] = {}
_TO_LIBCST: dict[type, Callable[[Any], Any]] = {}


def to_mirror(node: cst.CSTNode) -> Any:
    """The mirror of libcst's ``node`` and everything under it."""
    converter = _TO_MIRROR.get(type(node))
    if converter is None:
        converter = _TO_MIRROR[type(node)] = _converter(type(node), getattr(mirror, type(node).__name__), _mirror_value)
    return converter(node)


def to_libcst(node: Any) -> Any:
    """libcst's form of mirror ``node``: its origin if it has one, else one built from it."""
    origin = getattr(node, "origin", None)
    if origin is not None:
        return origin
    converter = _TO_LIBCST.get(type(node))
    if converter is None:
        converter = _TO_LIBCST[type(node)] = _converter(type(node), getattr(cst, type(node).__name__), _libcst_value, keep_origin=False)
    return converter(node)


def code_for_node(module: Any, node: Any) -> str:
    """What libcst generates for ``node`` with ``module``'s indentation and line endings."""
    origin = getattr(module, "origin", None)
    if origin is None:
        origin = cst.Module(body=(), default_indent=module.default_indent, default_newline=module.default_newline)
    return origin.code_for_node(to_libcst(node))  # type: ignore[no-any-return]


def _value_converter(
    node_base: type, convert_node: Callable[[Any], Any], sentinel: object, converted_sentinel: object
) -> Callable[[Any], Any]:
    """What a field value becomes on the other side: nodes converted, sequences item by item (a
    list stays a list, a tuple a tuple), ``MaybeSentinel.DEFAULT`` as the other one, the rest kept."""

    def convert(value: Any) -> Any:
        value_type = type(value)
        if value_type is str or value is None:
            return value
        if value_type is tuple:
            return tuple(convert(item) for item in value)
        if value_type is list:
            return [convert(item) for item in value]
        if isinstance(value, node_base):
            return convert_node(value)
        return converted_sentinel if value is sentinel else value

    return convert


_mirror_value = _value_converter(cst.CSTNode, to_mirror, cst.MaybeSentinel.DEFAULT, MaybeSentinel.DEFAULT)
_libcst_value = _value_converter(CSTNode, to_libcst, MaybeSentinel.DEFAULT, cst.MaybeSentinel.DEFAULT)


def _converter(source: type, target: type, convert: Callable[[Any], Any], *, keep_origin: bool = True) -> Callable[[Any], Any]:
    """A function written for ``source`` that builds a ``target`` field by field, bypassing
    ``__init__`` (libcst's validates, which a parsed tree needs not); a field ``source`` lacks
    keeps the target's default."""
    source_fields = set(field_names(source))
    shared = [name for name in field_names(target) if name in source_fields]
    # A mirror node's slots are assigned directly; a libcst node is frozen (object.__setattr__).
    store = "    new.{0} = {1}" if issubclass(target, CSTNode) else "    _set(new, {0!r}, {1})"
    lines = ["def convert(node):", "    new = _new(_target)"]
    for name in shared:  # strings and None (most leaves) are kept without a call
        lines += [f"    value = node.{name}", store.format(name, "value if value is None or type(value) is str else _convert(value)")]
    missing = [name for name in field_names(target) if name not in shared]
    namespace: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "_target": target, "_convert": convert}
    if missing:  # a field of another libcst release: its default (a required one fails here)
        defaults = field_defaults(target)
        for name in missing:
            namespace[f"_default_{name}"] = defaults[name]
            lines.append(store.format(name, f"_default_{name}"))
    if keep_origin:
        lines.append(store.format("origin", "node"))
    lines.append("    return new")
    exec(compiled("\n".join(lines)), namespace)  # noqa: S102 - written from the classes' own field names only
    return namespace["convert"]  # type: ignore[no-any-return]
