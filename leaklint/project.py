"""What the files of one run tell about each other: the decorators that turn gradients off.

A decorator defined in one module of a project and used in another (yolov5's
``@smart_inference_mode()``, defined in ``utils/torch_utils.py`` and put on ``run()`` in
``val.py``) disables gradients for the whole function it decorates. Linting ``val.py`` alone,
every forward in ``run()`` looks like evaluation with gradients on (LL201). So before the files
are linted, the run notes the names used as decorators in its files, and in the files that define
one of them and mention ``no_grad`` or ``inference_mode``, the top-level functions that build
such a decorator: they refer to a grad-disabling context (``torch.no_grad``,
``torch.inference_mode``) and return a function they define, or what they apply to their argument
(a decorator, or a decorator factory). Each is known by its qualified name under every dotted suffix
of its file's path (``utils.torch_utils.smart_inference_mode``, ``torch_utils.smart_...``), which
is how ``from utils.torch_utils import smart_inference_mode`` (or a relative import) names it.

The names travel with the run's settings (:attr:`Settings.no_grad_decorators`), so they reach the
worker processes and are part of every result-cache key.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable

from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from leaklint.analysis.torch_api import NO_GRAD_CONTEXTS

if TYPE_CHECKING:
    from leaklint.config import Settings

#: Words one of which a file that defines such a decorator contains (a cheap first look).
_GRAD_WORDS = (b"no_grad", b"inference_mode")
#: ``@name`` / ``@module.name(`` at the start of a line: a decorator's (last) name.
_DECORATOR = re.compile(rb"^[ \t]*@([A-Za-z_][\w.]*)", re.MULTILINE)
#: ``def name(`` at the start of a line (top-level functions are all the scan looks at).
_DEFINITION = re.compile(rb"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_TOP_LEVEL_IMPORT = re.compile(rb"^(?:import|from)[ \t][^\n]*", re.MULTILINE)
#: A top-level function with its decorators' line-start and its indented body.
_FUNCTION_BLOCK = re.compile(rb"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*).*?(?=^[^ \t\n#]|\Z)", re.MULTILINE | re.DOTALL)
#: Dotted suffixes of a file's path kept as its module names (``a.b.c.d`` for deep packages).
_MAX_MODULE_DEPTH = 4


def with_project_facts(settings: Settings, files: Sequence[str]) -> Settings:
    """``settings`` with what the run's ``files`` say about each other."""
    return replace(settings, no_grad_decorators=no_grad_decorators(files))


def no_grad_decorators(paths: Iterable[str]) -> tuple[str, ...]:
    """The qualified names (sorted) of the grad-disabling decorators the files at ``paths`` define
    and use. Reading is cheap: every file is scanned as bytes for the names used as decorators,
    and only a file that defines one of them and mentions a grad-disabling context is parsed.
    Unreadable and unparsable files are skipped (they are reported when linted)."""
    sources: dict[str, bytes] = {}
    used: set[bytes] = set()
    for path in paths:
        if not path.endswith((".py", ".pyi")):
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        used.update(match.rsplit(b".", 1)[-1] for match in _DECORATOR.findall(data))
        if any(word in data for word in _GRAD_WORDS):
            sources[path] = data
    found: set[str] = set()
    for path, data in sources.items():
        defined = {name for name in _DEFINITION.findall(data) if name in used}
        if not defined:
            continue
        tree = _parse(_imports_and_functions(data, defined)) or _parse(data)
        if tree is None:
            continue
        functions = defined_no_grad_decorators(tree, {name.decode() for name in defined})
        found.update(f"{module}.{name}" for module in module_names(path) for name in functions)
    return tuple(sorted(found))


def _imports_and_functions(data: bytes, names: set[bytes]) -> bytes:
    """The module's top-level imports and the top-level functions ``names``, cut out of its text
    (each function runs to the next line that starts at column 0): a few lines to parse instead
    of a whole training script."""
    parts = _TOP_LEVEL_IMPORT.findall(data)
    for match in _FUNCTION_BLOCK.finditer(data):
        if match.group(1) in names:
            parts.append(match.group(0))
    return b"\n".join(parts) + b"\n"


def _parse(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def module_names(path: str) -> list[str]:
    """``a/b/utils/torch_utils.py`` -> ``torch_utils``, ``utils.torch_utils``, ``b.utils.torch_utils``..."""
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    parts[-1] = os.path.splitext(parts[-1])[0]
    if parts[-1] == "__init__":
        parts.pop()
    parts = [part for part in parts if part]
    return [".".join(parts[-depth:]) for depth in range(1, min(_MAX_MODULE_DEPTH, len(parts)) + 1)]


def defined_no_grad_decorators(tree: ast.Module, names: set[str] | None = None) -> list[str]:
    """Top-level functions of ``tree`` (those in ``names``, when given) that refer to a
    grad-disabling context and return a decoration (see :func:`_returns_a_decoration`)."""
    aliases = _torch_aliases(tree)
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (names is not None and node.name not in names):
            continue
        inner = list(ast.walk(node))[1:]
        if _returns_a_decoration(node, inner) and any(_qualified(child, aliases) in NO_GRAD_CONTEXTS for child in inner):
            found.append(node.name)
    return found


def _returns_a_decoration(function: ast.FunctionDef | ast.AsyncFunctionDef, inner: list[ast.AST]) -> bool:
    """``function`` returns a function it defines (``return wrapper``) or the result of applying
    something to its argument (``return torch.no_grad()(fn)``): what decorators and decorator
    factories do."""
    nested = {child.name for child in inner if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for child in inner:
        if isinstance(child, ast.Return) and child.value is not None:
            value = child.value
            if isinstance(value, ast.Name) and value.id in nested:
                return True
            if isinstance(value, ast.Lambda) or (isinstance(value, ast.Call) and isinstance(value.func, ast.Call)):
                return True
    return False


def _torch_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> what it stands for, from the module's top-level imports (``th`` ->
    ``torch``, ``no_grad`` -> ``torch.no_grad``)."""
    aliases: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _qualified(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``torch.no_grad`` for ``th.no_grad`` after ``import torch as th``; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])
