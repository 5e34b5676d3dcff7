"""Write ``leaklint/analysis/mirror.py``: libcst's node classes as plain ``__slots__`` classes.

Run it after upgrading libcst (``tests/test_mirror.py`` says when)::

    python tools/generate_mirror.py

Every class libcst exports, and every base class they have, gets a mirror class of the same name
with the same bases, fields (in order) and defaults; see :mod:`leaklint.analysis.mirror_base`
for why the mirror exists. The output depends only on the installed libcst, so running this
twice writes the same file.
"""

from __future__ import annotations

import enum
import inspect
import os
import sys
from pathlib import Path
from typing import Any

import libcst as cst

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaklint.analysis.mirror_base import MIXINS  # noqa: E402
from leaklint.analysis.node_fields import field_defaults, field_names  # noqa: E402

TARGET = ROOT / "leaklint" / "analysis" / "mirror.py"

HEADER = '''"""libcst {version}'s node classes, mirrored: written by ``tools/generate_mirror.py``, do not edit.

Same names, bases, fields (in order) and defaults as libcst's; see
:mod:`leaklint.analysis.mirror_base` for why and for what every class shares.
``_child_fields`` is :func:`leaklint.analysis.walk._child_fields` of the libcst class, worked out
here so that the walk needs no type hints at run time.
"""

# fmt: off
# ruff: noqa
from leaklint.analysis.mirror_base import CSTNode, ConcatenatedValue, LiteralValue, MaybeSentinel, ModuleMethods

LIBCST_VERSION = {version!r}
'''


def node_classes() -> list[type]:
    """libcst's exported node classes and all their node bases, CSTNode excepted."""
    found: set[type] = set()
    for value in vars(cst).values():
        if inspect.isclass(value) and issubclass(value, cst.CSTNode):
            found.update(base for base in value.__mro__ if issubclass(base, cst.CSTNode) and base is not cst.CSTNode)
    return sorted(found, key=lambda c: c.__name__)


class Writer:
    def __init__(self, classes: list[type]) -> None:
        self.classes = classes
        self.subclassed = {base for c in classes for base in c.__mro__[1:]}
        self.lines: list[str] = []
        self.written: set[type] = set()
        self.constants: dict[str, str] = {}  # expression -> constant name
        self.initializers: dict[str, str] = {}  # parameter list -> shared __init__ function name

    def write_all(self) -> str:
        for node_class in self.classes:
            self.write(node_class)
        return "\n".join(self.lines) + "\n"

    def write(self, node_class: type) -> None:
        if node_class in self.written or node_class is cst.CSTNode:
            return
        self.written.add(node_class)
        bases = [b for b in node_class.__bases__ if issubclass(b, cst.CSTNode)]
        for base in bases:
            self.write(base)
        leaf = node_class not in self.subclassed
        fields = list(field_names(node_class)) if leaf else []
        initializer = self.initializer(fields, self.defaults(node_class)) if fields else None
        names = [b.__name__ for b in bases] + [m.__name__ for m in MIXINS.get(node_class.__name__, ())]
        self.lines += ["", "", f"class {node_class.__name__}({', '.join(names)}):"]
        if not leaf:
            self.lines.append("    __slots__ = ()")
            return
        self.lines.append(f"    __slots__ = _fields = {tuple(fields)!r}")
        self.lines.append(f"    _child_fields = {child_fields(node_class)!r}")
        if initializer is not None:
            self.lines.append(f"    __init__ = {initializer}")

    def initializer(self, fields: list[str], defaults: dict[str, str]) -> str:
        """The name of an ``__init__`` taking ``fields`` with ``defaults``, written once and shared
        by every class with the same parameters (the operators, the brackets...)."""
        parameters = ", ".join(name if name not in defaults else f"{name}={defaults[name]}" for name in fields)
        if parameters not in self.initializers:
            name = self.initializers[parameters] = f"_init_{len(self.initializers)}"
            self.lines += ["", "", f"def {name}(self, {parameters}):"]
            self.lines += [f"    self.{field} = {field}" for field in fields]
        return self.initializers[parameters]

    def defaults(self, node_class: type) -> dict[str, str]:
        return {name: self.expression(value) for name, value in field_defaults(node_class).items()}

    def expression(self, value: Any) -> str:
        """Source for ``value`` at module level: a literal, or a constant holding a node."""
        if isinstance(value, enum.Enum):
            return f"{type(value).__name__}.{value.name}"
        if isinstance(value, (list, tuple)):
            inner = [self.expression(item) for item in value]
            return "(" + "".join(f"{item}, " for item in inner) + ")" if isinstance(value, tuple) else "[" + ", ".join(inner) + "]"
        if isinstance(value, cst.CSTNode):
            self.write(type(value))
            arguments = []
            defaults = field_defaults(type(value))
            for name in field_names(type(value)):
                current = getattr(value, name)
                if name not in defaults or not _same(current, defaults[name]):
                    arguments.append(f"{name}={self.expression(current)}")
            source = f"{type(value).__name__}({', '.join(arguments)})"
            if source not in self.constants:
                name = self.constants[source] = f"_DEFAULT_{len(self.constants)}"
                self.lines += ["", "", f"{name} = {source}"]
            return self.constants[source]
        if value is None or isinstance(value, (str, bool, int)):
            return repr(value)
        raise TypeError(f"no mirror for a default of type {type(value).__name__}: {value!r}")


def _same(first: object, second: object) -> bool:
    if isinstance(first, cst.CSTNode) or isinstance(second, cst.CSTNode):
        return isinstance(first, cst.CSTNode) and isinstance(second, cst.CSTNode) and first.deep_equals(second)
    return first == second


def child_fields(node_class: type) -> object:
    """The walk's plan for ``node_class``, worked out on libcst's classes."""
    from leaklint.analysis import nodes
    from leaklint.analysis.walk import _child_fields

    if nodes.FAMILY != nodes.LIBCST:
        raise RuntimeError("generate the mirror with LEAKLINT_NODES unset (the walk must read libcst's classes)")
    return _child_fields(node_class)


def generate() -> str:
    return HEADER.format(version=cst.LIBCST_VERSION) + Writer(node_classes()).write_all()


def main() -> None:
    os.environ["LEAKLINT_NODES"] = "libcst"
    TARGET.write_text(generate(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} from libcst {cst.LIBCST_VERSION}")


if __name__ == "__main__":
    main()
