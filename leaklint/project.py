"""What the files of one run tell about each other: decorators that turn gradients off, and
helper classes that keep what their methods are given.

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

Likewise a meter, buffer or pool defined in ``utils/meters.py`` and fed a loss every step in
``train.py``: the run finds the top-level classes that another of its files imports by name and
that have no base from another package, analyses the modules that define them, and keeps a summary
of each class whose methods keep a parameter on ``self``
(:mod:`leaklint.analysis.project_classes`). A qualified name that two files of the run define is
left out: which class an import means is then a guess.

Both travel with the run's settings (:attr:`Settings.no_grad_decorators`,
:attr:`Settings.project_classes`), so they reach the worker processes and are part of every
result-cache key.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable

from dataclasses import replace
from typing import TYPE_CHECKING, Iterator, Sequence

from leaklint.analysis.torch_api import NO_GRAD_CONTEXTS

if TYPE_CHECKING:
    from leaklint.analysis.project_classes import ProjectClass
    from leaklint.cache import SummaryCache
    from leaklint.config import Settings

#: Words one of which a file that defines such a decorator contains (a cheap first look).
_GRAD_WORDS = (b"no_grad", b"inference_mode")
#: ``@name`` / ``@module.name(`` at the start of a line: a decorator's (last) name.
_DECORATOR = re.compile(rb"^[ \t]*@([A-Za-z_][\w.]*)", re.MULTILINE)
#: ``def name(`` at the start of a line (top-level functions are all the scan looks at).
_DEFINITION = re.compile(rb"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_TOP_LEVEL_IMPORT = re.compile(rb"^(?:import|from)[ \t][^\n]*", re.MULTILINE)
#: ``from x import a, b as c`` anywhere, or ``from x import (a,\n b)``: the names it takes.
_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*(\([^)]*\)|[^\n]*)", re.MULTILINE)
#: The largest class summarized: meters, buffers, pools and loggers are a few dozen lines; a
#: trainer or a framework's central class is thousands, costs a second to analyse, and is not
#: what a training script hands a loss to keep.
MAX_HELPER_BYTES = 16_000
#: What a class body that keeps a growing record of its arguments contains: an augmented
#: assignment, or a call that adds to a container (see ``KEPT_KINDS``).
_GROWS = re.compile(rb"[-+*/]=|\.(?:append|appendleft|extend|insert|add|put)\(")
#: Where a top-level statement ends: a line that starts at column 0 (not blank, not a comment).
_NEXT_TOP_LEVEL_LINE = re.compile(rb"\n(?=[^ \t\n#])")
#: A top-level class, with its bases if it has any.
_CLASS = re.compile(rb"^class[ \t]+([A-Za-z_]\w*)[ \t]*(?:\(([^)]*)\))?[ \t]*:", re.MULTILINE)
#: A top-level function with its decorators' line-start and its indented body.
_FUNCTION_BLOCK = re.compile(rb"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*).*?(?=^[^ \t\n#]|\Z)", re.MULTILINE | re.DOTALL)
#: Dotted suffixes of a file's path kept as its module names (``a.b.c.d`` for deep packages).
_MAX_MODULE_DEPTH = 4


def with_project_facts(settings: Settings, files: Sequence[str], *, jobs: int = 1) -> Settings:
    """``settings`` with what the run's ``files`` say about each other (``jobs`` processes
    analyse the modules that define helper classes)."""
    from leaklint.cache import open_summary_cache

    sources = _read_sources(files)
    decorators = no_grad_decorators(files, sources)
    classes = keeping_project_classes(sources, frozenset(decorators), jobs=jobs, cache=open_summary_cache(settings))
    return replace(settings, no_grad_decorators=decorators, project_classes=classes)


def _read_sources(paths: Iterable[str]) -> dict[str, bytes]:
    """The Python files among ``paths`` by path, as bytes (unreadable ones left out: they are
    reported when linted)."""
    sources: dict[str, bytes] = {}
    for path in paths:
        if not path.endswith((".py", ".pyi")):
            continue
        try:
            with open(path, "rb") as handle:
                sources[path] = handle.read()
        except OSError:
            continue
    return sources


def no_grad_decorators(paths: Iterable[str], sources: dict[str, bytes] | None = None) -> tuple[str, ...]:
    """The qualified names (sorted) of the grad-disabling decorators the files at ``paths`` define
    and use. Reading is cheap: every file is scanned as bytes for the names used as decorators,
    and only a file that defines one of them and mentions a grad-disabling context is parsed.
    Unparsable files are skipped (they are reported when linted). ``sources``: the files' bytes,
    when already read."""
    if sources is None:
        sources = _read_sources(paths)
    used: set[bytes] = set()
    for data in sources.values():
        used.update(match.rsplit(b".", 1)[-1] for match in _DECORATOR.findall(data))
    found: set[str] = set()
    for path, data in sources.items():
        if not any(word in data for word in _GRAD_WORDS):
            continue
        defined = {name for name in _DEFINITION.findall(data) if name in used}
        if not defined:
            continue
        tree = _parse(_imports_and_functions(data, defined)) or _parse(data)
        if tree is None:
            continue
        functions = defined_no_grad_decorators(tree, {name.decode() for name in defined})
        found.update(f"{module}.{name}" for module in module_names(path) for name in functions)
    return tuple(sorted(found))


def keeping_project_classes(
    sources: dict[str, bytes], no_grad: frozenset[str] = frozenset(), *, jobs: int = 1, cache: SummaryCache | None = None
) -> tuple[ProjectClass, ...]:
    """Summaries of the run's top-level classes that another file imports by name and whose
    methods keep their arguments (see the module docstring). Only the modules that define a
    candidate are parsed and analysed, on ``jobs`` processes; with a ``cache``, each module's
    summaries are kept there and read back while its bytes stay the same."""
    imported: dict[bytes, set[str]] = {}
    defined: dict[str, set[str]] = {}  # class name -> files defining a top-level class of that name
    candidates: dict[str, set[str]] = {}  # file -> its candidate classes
    for path, data in sources.items():
        for names in _FROM_IMPORT.findall(data):
            for name in _imported_names(names):
                imported.setdefault(name, set()).add(path)
        for match in _CLASS.finditer(data):
            defined.setdefault(match.group(1).decode(), set()).add(path)
    for path, data in sources.items():
        matches = {match.group(1): match for match in _CLASS.finditer(data)}
        headers = {name: match.group(2) for name, match in matches.items()}
        for name in headers:
            if not imported.get(name, set()) - {path} or not _whole_class_in_file(name, headers):
                continue
            chain = [_block(data, matches[ancestor].start()) for ancestor in _ancestry(name, headers)]
            if sum(map(len, chain)) <= MAX_HELPER_BYTES and any(_GROWS.search(block) for block in chain):
                candidates.setdefault(path, set()).add(name.decode())

    found: list[ProjectClass] = []
    for path, summaries in _summaries(sources, candidates, no_grad, jobs, cache):
        for summary in summaries:
            unique = tuple(q for q in summary.qualified_names if not _defined_elsewhere(q, path, defined))
            if unique:
                found.append(replace(summary, qualified_names=unique))
    return tuple(found)


def _summaries(
    sources: dict[str, bytes], candidates: dict[str, set[str]], no_grad: frozenset[str], jobs: int, cache: SummaryCache | None
) -> list[tuple[str, list[ProjectClass]]]:
    """(path, its classes' summaries) for every file with candidates: from the cache where it
    has them, the others analysed on ``jobs`` processes (and stored)."""
    from leaklint.analysis.project_classes import from_json, to_json
    from leaklint.engine import map_in_workers

    work = [(path, sources[path], frozenset(names), no_grad) for path, names in sorted(candidates.items())]
    keys = [cache.key(path, data, *sorted(names), "", *sorted(grad)) if cache else "" for path, data, names, grad in work]
    known: dict[str, list[ProjectClass]] = {}
    if cache is not None:
        for (path, *_), key in zip(work, keys):
            stored = cache.load(key)
            try:
                if isinstance(stored, list):
                    known[path] = [from_json(item) for item in stored]
            except ValueError:
                pass  # an entry from another format, or edited: analysed again
    missing = [(job, key) for job, key in zip(work, keys) if job[0] not in known]
    for (job, key), summaries in zip(missing, map_in_workers(_summarize_job, [job for job, _ in missing], jobs)):
        known[job[0]] = summaries
        if cache is not None:
            cache.store(key, [to_json(summary) for summary in summaries])
    return [(path, known[path]) for path, *_ in work]


def _imported_names(clause: bytes) -> Iterator[bytes]:
    """``a, b as c`` / ``(a,\n b)`` -> ``a``, ``b``: the names a ``from`` import takes."""
    for part in clause.strip(b"()").replace(b"\\", b" ").split(b","):
        words = part.split(b"#", 1)[0].split()
        if words and words[0] != b"*":
            yield words[0]


def _block(data: bytes, start: int) -> bytes:
    """The top-level statement starting at ``start``: up to the next line that starts at column 0."""
    end = _NEXT_TOP_LEVEL_LINE.search(data, start + 1)
    return data[start : end.start() + 1 if end else len(data)]


def _bases(header: bytes | None) -> list[bytes]:
    return [base.strip() for base in (header or b"").split(b",") if base.strip()]


def _ancestry(name: bytes, headers: dict[bytes, bytes | None]) -> list[bytes]:
    """The class and its bases defined in the same file, transitively."""
    found = [name]
    for current in found:
        found.extend(base for base in _bases(headers.get(current)) if base in headers and base not in found)
    return found


def _whole_class_in_file(name: bytes, headers: dict[bytes, bytes | None]) -> bool:
    """The class and its bases have no base but ``object`` and classes of the same file: the
    file shows every method it has."""
    return all(base == b"object" or base in headers for ancestor in _ancestry(name, headers) for base in _bases(headers.get(ancestor)))


def _defined_elsewhere(qualified: str, path: str, defined: dict[str, set[str]]) -> bool:
    module, _, name = qualified.rpartition(".")
    return any(module in module_names(other) for other in defined.get(name, ()) if other != path)


def _summarize_job(job: tuple[str, bytes, frozenset[str], frozenset[str]]) -> list[ProjectClass]:
    return _summarize(*job)


def _summarize(path: str, data: bytes, names: frozenset[str], no_grad: frozenset[str]) -> list[ProjectClass]:
    """Analyse one module and summarize its classes ``names``; nothing when it cannot be read or
    analysed (the file's own lint reports why)."""
    import libcst as cst

    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.project_classes import keeping_classes
    from leaklint.analysis.walk import children_cached
    from leaklint.engine import run_deep

    def parse() -> cst.Module:
        try:
            return cst.parse_module(_classes_and_helpers(data, names).decode("utf-8"))
        except cst.ParserSyntaxError:  # the cut went wrong (a multi-line import): the whole file
            return cst.parse_module(data.decode("utf-8"))

    def summarize() -> list[ProjectClass]:
        module = parse()
        with children_cached():
            facts = ModuleFacts(module, project_no_grad=no_grad)
            try:
                return keeping_classes(facts, module_names(path), names)
            finally:
                facts.release()

    try:
        return run_deep(summarize)
    except Exception:  # a syntax error, an encoding problem, a file too deep: linting reports it
        return []


def _classes_and_helpers(data: bytes, names: frozenset[str]) -> bytes:
    """The module's top-level imports, the classes ``names`` with their bases of the same file,
    and the top-level functions the classes mention, cut out of its text: what the classes' methods
    can run, without the rest of a large module."""
    blocks = {match.group(1): _block(data, match.start()) for match in _CLASS.finditer(data)}
    wanted = [name.encode() for name in names]
    kept: list[bytes] = []
    while wanted:
        name = wanted.pop()
        if name in kept or name not in blocks:
            continue
        kept.append(name)
        header = _CLASS.match(blocks[name])
        bases = header.group(2) if header is not None else None
        wanted.extend(base.strip() for base in (bases or b"").split(b",") if base.strip() in blocks)
    classes = [blocks[name] for name in blocks if name in kept]  # in file order: bases come first
    text = b"\n".join(classes)
    functions = [match.group(0) for match in _FUNCTION_BLOCK.finditer(data) if re.search(rb"\b" + match.group(1) + rb"\b", text)]
    return b"\n".join([*_TOP_LEVEL_IMPORT.findall(data), *functions, *classes]) + b"\n"


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
