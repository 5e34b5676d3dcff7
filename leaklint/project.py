"""What the files of one run tell about each other: decorators that turn gradients off, helper
classes that keep what their methods are given, and functions only ever called without gradients.

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
``train.py``: the run finds the top-level classes that another of its files imports (by name,
through their module, ``meters.AverageMeter()``, or with ``from utils.meters import *``) and that
have no base from another package, analyses the modules that define them, and keeps a summary
of each class whose methods keep a parameter on ``self``
(:mod:`leaklint.analysis.project_classes`). A qualified name that two files of the run define is
left out: which class an import means is then a guess.

And a function that every other file of the run imports by name and calls only with gradients
disabled (``evaluate()`` of ``evaluation.py``, called inside ``with torch.no_grad():`` in
``train.py``): the callers are read with ``ast`` (cut down to their imports and the statements
that use the name, and only after a look at the text has not ruled them out), and the function's
own file treats it as grad-free when its calls there agree (``facts._only_called_without_grad``).

The helpers are summarized and the callers read on the run's processes, and both are kept in the
result cache's folder per file (:class:`leaklint.cache.SummaryCache`). Everything travels with the
run's settings (:attr:`Settings.no_grad_decorators`, :attr:`Settings.project_classes`,
:attr:`Settings.grad_free_functions`), so it reaches the worker processes and is part of every
result-cache key. Files are cut into top-level statements by their text
(:func:`_top_level_blocks`), one way for every cut.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

from leaklint.analysis.torch_api import NO_GRAD_CONTEXTS
from leaklint.config import normalized_path

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
#: ``from x import a, b as c`` anywhere, or ``from x import (a,\n b)``: the names it takes.
_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*(\([^)]*\)|[^\n]*)", re.MULTILINE)
#: ``module.Name(``: a capitalized name (a class, by convention) called through a module.
_ATTRIBUTE_CALL = re.compile(rb"\.([A-Z]\w*)[ \t]*\(")
#: ``Name(`` not after a dot: in a file with a ``from m import *``, what it may have taken.
_BARE_CALL = re.compile(rb"(?<![\w.])([A-Z]\w*)[ \t]*\(")
#: ``from m import *`` at the start of a line.
_STAR_IMPORT = re.compile(rb"^from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.MULTILINE)
#: The largest class summarized: meters, buffers, pools and loggers are a few dozen lines; a
#: trainer or a framework's central class is thousands, costs a second to analyse, and is not
#: what a training script hands a loss to keep.
MAX_HELPER_BYTES = 16_000
#: What a class body that keeps a growing record of its arguments contains: an augmented
#: assignment, or a call that adds to a container (see ``KEPT_KINDS``).
_GROWS = re.compile(rb"[-+*/]=|\.(?:append|appendleft|extend|insert|add|put)\(")
#: Where a top-level statement starts: a line that starts at column 0 and is not blank, a comment
#: or the closing bracket of a bracketed import, signature or call. A decorator line starts the
#: statement of the def or class it decorates (see :func:`_top_level_blocks`).
_TOP_LEVEL_START = re.compile(rb"^[^ \t\n#)\]}]", re.MULTILINE)
#: The def or class a top-level statement defines (the first such line at column 0 in it).
_HEADER = re.compile(rb"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
#: A top-level class, with its bases if it has any.
_CLASS = re.compile(rb"^class[ \t]+([A-Za-z_]\w*)[ \t]*(?:\(([^)]*)\))?[ \t]*:", re.MULTILINE)
#: Dotted suffixes of a file's path kept as its module names (``a.b.c.d`` for deep packages).
_MAX_MODULE_DEPTH = 4
J = TypeVar("J")
R = TypeVar("R")


def with_project_facts(settings: Settings, files: Sequence[str], *, jobs: int = 1, cache: bool = False) -> Settings:
    """``settings`` with what the run's ``files`` say about each other (``jobs`` processes
    analyse the modules that define helper classes and read the files that call grad-free
    functions). ``cache``: keep what they find in the run's result cache (when it is on)."""
    sources = _read_sources(files, settings.max_file_size)
    decorators = no_grad_decorators(files, sources)
    if len(sources) < 2:  # helpers and callers are about other files of the run
        return replace(settings, no_grad_decorators=decorators)
    summary_cache = None
    if cache:
        from leaklint.cache import open_summary_cache

        summary_cache = open_summary_cache(settings)
    imported = imported_names(sources)
    classes = keeping_project_classes(sources, frozenset(decorators), jobs=jobs, cache=summary_cache, imported=imported)
    callees = grad_free_functions(sources, decorators, imported=imported, jobs=jobs, cache=summary_cache)
    return replace(settings, no_grad_decorators=decorators, project_classes=classes, grad_free_functions=callees)


def imported_names(sources: dict[str, bytes]) -> dict[bytes, set[str]]:
    """Name -> the files that take it with a ``from ... import`` (read from the text: a superset)."""
    imported: dict[bytes, set[str]] = {}
    for path, data in sources.items():
        if b"import" not in data:
            continue
        for names in _FROM_IMPORT.findall(data):
            for name in _imported_names(names):
                imported.setdefault(name, set()).add(path)
    return imported


def classes_used(sources: dict[str, bytes]) -> dict[bytes, set[str]]:
    """Name -> the files that may take a class of that name from another module without naming it
    in a ``from ... import``: ``meters.AverageMeter(...)`` after ``import utils.meters as
    meters`` or ``from . import meters``, and ``AverageMeter(...)`` in a file with a ``from
    utils.meters import *``. Read from the text, capitalized names only: a superset that the
    importing file's analysis narrows down by what its imports really name."""
    used: dict[bytes, set[str]] = {}
    for path, data in sources.items():
        if b"import" not in data:
            continue
        names = set(_ATTRIBUTE_CALL.findall(data))
        if _STAR_IMPORT.search(data):
            names.update(_BARE_CALL.findall(data))
        for name in names:
            used.setdefault(name, set()).add(path)
    return used


def _read_sources(paths: Iterable[str], max_size: int | None = None) -> dict[str, bytes]:
    """The Python files among ``paths`` by path, as bytes; unreadable ones, and those over
    ``max_size`` bytes (which the run does not lint either), left out: they are reported when
    linted."""
    sources: dict[str, bytes] = {}
    for path in paths:
        if not path.endswith((".py", ".pyi")):
            continue
        try:
            if max_size is not None and os.path.getsize(path) > max_size:
                continue
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
    sources: dict[str, bytes],
    no_grad: frozenset[str] = frozenset(),
    *,
    jobs: int = 1,
    cache: SummaryCache | None = None,
    imported: dict[bytes, set[str]] | None = None,
) -> tuple[ProjectClass, ...]:
    """Summaries of the run's top-level classes that another file imports (by name, through its
    module, or with a ``from m import *``: :func:`classes_used`) and whose methods keep their
    arguments (see the module docstring). Only the modules that define a
    candidate are parsed and analysed, on ``jobs`` processes; with a ``cache``, each module's
    summaries are kept there and read back while its bytes stay the same."""
    if imported is None:
        imported = imported_names(sources)
    used = classes_used(sources)
    defined: dict[str, set[str]] = {}  # class name -> files defining a top-level class of that name
    candidates: dict[str, set[str]] = {}  # file -> its candidate classes
    for path, data in sources.items():
        for match in _CLASS.finditer(data):
            defined.setdefault(match.group(1).decode(), set()).add(path)
    for path, data in sources.items():
        headers = {match.group(1): match.group(2) for match in _CLASS.finditer(data)}
        blocks: dict[bytes, bytes] | None = None
        for name in headers:
            takers = imported.get(name, set()) | used.get(name, set())
            if not takers - {path} or not _whole_class_in_file(name, headers):
                continue
            blocks = blocks if blocks is not None else _named_blocks(data)
            chain = [blocks.get(ancestor, b"") for ancestor in _ancestry(name, headers)]
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
    """(path, its classes' summaries) for every file with candidates."""
    from leaklint.analysis.project_classes import from_json, to_json

    work = [(path, sources[path], frozenset(names), no_grad) for path, names in sorted(candidates.items())]
    keys = [("classes", path, data, *sorted(names), "", *sorted(grad)) for path, data, names, grad in work]
    found = _cached_map(
        _summarize_job, work, keys, cache, jobs,
        encode=lambda summaries: [to_json(summary) for summary in summaries],
        decode=lambda stored: [from_json(item) for item in stored],
    )
    return [(job[0], summaries) for job, summaries in zip(work, found)]


def _cached_map(
    function: Callable[[J], R],
    work: list[J],
    keys: list[tuple[str | bytes, ...]],
    cache: SummaryCache | None,
    jobs: int,
    *,
    encode: Callable[[R], Any],
    decode: Callable[[Any], R],
) -> list[R]:
    """``[function(item) for item in work]``: from the cache where it has an entry under the
    item's key, the others on ``jobs`` processes (and stored). An entry that does not decode
    (``decode`` raises ValueError or TypeError: another format, or edited) is computed again."""
    from leaklint.engine import map_in_workers

    results: dict[int, R] = {}
    if cache is not None:
        for index, key in enumerate(keys):
            stored = cache.load(cache.key(*key))
            if stored is None:
                continue
            try:
                results[index] = decode(stored)
            except (ValueError, TypeError):
                pass
    missing = [index for index in range(len(work)) if index not in results]
    for index, result in zip(missing, map_in_workers(function, [work[index] for index in missing], jobs)):
        results[index] = result
        if cache is not None:
            cache.store(cache.key(*keys[index]), encode(result))
    return [results[index] for index in range(len(work))]


def grad_free_functions(
    sources: dict[str, bytes],
    decorators: Sequence[str] = (),
    *,
    imported: dict[bytes, set[str]] | None = None,
    jobs: int = 1,
    cache: SummaryCache | None = None,
) -> tuple[tuple[str, str], ...]:
    """(file, function): top-level functions that other files of the run import by name and only
    ever call with gradients disabled (inside ``with torch.no_grad():``, or in a function a
    grad-disabling decorator wraps), and never use otherwise (passed as a value, called from a
    lambda). The function's own file decides the rest: its analysis treats the function as
    grad-free when its calls there, if any, are too. Only files that mention a grad-disabling
    context are parsed (with ``ast``): a file that does not calls with gradients on."""
    if imported is None:
        imported = imported_names(sources)
    words = [*_GRAD_WORDS, *(name.rsplit(".", 1)[-1].encode() for name in decorators)]
    candidates: list[tuple[str, bytes, set[str]]] = []
    for path, data in sources.items():
        for name in set(_DEFINITION.findall(data)):
            users = imported.get(name, set()) - {path}
            if users and all(any(word in sources[user] for word in words) for user in users):
                candidates.append((path, name, users))
    lines = {user: sources[user].split(b"\n") for _, _, users in candidates for user in users}
    candidates = [
        (path, name, users) for path, name, users in candidates
        if all(_may_call_only_without_grad(lines[user], name, words) for user in users)
    ]
    by_user: dict[str, set[bytes]] = {}
    for _, name, users in candidates:
        for user in users:
            by_user.setdefault(user, set()).add(name)
    work = [(sources[user], tuple(sorted(names)), tuple(decorators)) for user, names in sorted(by_user.items())]
    keys = [("calls", data, *names, b"", *(name.encode() for name in grad)) for data, names, grad in work]
    verdicts = dict(zip(sorted(by_user), _cached_map(_import_verdicts_job, work, keys, cache, jobs, encode=dict, decode=_verdicts_from_json)))
    found = []
    for path, name, users in candidates:
        modules = module_names(path)
        known = [[verdicts[user].get(f"{module}:{name.decode()}") for module in modules] for user in users]
        if all(any(verdict is True for verdict in per_user) for per_user in known):
            found.append((normalized_path(path), name.decode()))
    return tuple(sorted(found))


def _import_verdicts_job(job: tuple[bytes, tuple[bytes, ...], tuple[str, ...]]) -> dict[str, bool]:
    """For one file: ``"module:name"`` -> whether every use of what ``from module import name``
    binds is a call with gradients disabled, for the imports of ``names``."""
    data, names, decorators = job
    tree = _parse(_imports_and_uses(data, set(names))) or _parse(data)
    if tree is None:
        return {}
    uses = _calls_without_grad(tree, decorators)
    wanted = {name.decode() for name in names}
    return {
        f"{node.module}:{alias.name}": uses.get(alias.asname or alias.name, False)
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
        if alias.name in wanted
    }


def _verdicts_from_json(stored: Any) -> dict[str, bool]:
    if not isinstance(stored, dict) or not all(isinstance(value, bool) for value in stored.values()):
        raise ValueError("not a file's verdicts")
    return stored


def _may_call_only_without_grad(lines: list[bytes], name: bytes, words: Sequence[bytes]) -> bool:
    """A look at the text before parsing: False when some line calls ``name(`` and none of the
    lines that open its enclosing blocks (found by indentation, with the decorators of an
    enclosing def) mentions a grad-disabling context. Only ever rules out: the ``ast`` decides."""
    call = re.compile(rb"(?<![\w.])" + re.escape(name) + rb"[ \t]*\(")
    for number, line in enumerate(lines):
        if not call.search(line):
            continue
        if line.lstrip().startswith((b"def ", b"import ", b"from ", b"#")):
            continue
        indent = len(line) - len(line.lstrip())
        if any(word in line for word in words):
            continue  # `with torch.no_grad(): evaluate(...)` on one line
        found = False
        for above in range(number - 1, -1, -1):
            text = lines[above]
            stripped = text.lstrip()
            if not stripped or stripped.startswith((b"#", b")", b"]", b"}")):
                continue  # blank, a comment, or the end of a bracketed signature or call
            level = len(text) - len(stripped)
            if level >= indent:
                continue
            indent = level
            if any(word in text for word in words):
                found = True
                break
            if stripped.startswith((b"def ", b"async def ")):
                decorators = above - 1
                while decorators >= 0 and lines[decorators].lstrip().startswith(b"@"):
                    found = found or any(word in lines[decorators] for word in words)
                    decorators -= 1
                break  # the body of a def runs when it is called, not under the blocks around it
            if indent == 0:
                break
        if not found:
            return False
    return True


def _imports_and_uses(data: bytes, names: set[bytes]) -> bytes:
    """The module's top-level imports and the top-level statements that mention one of
    ``names`` (or a local name an import gives one), cut out of its text: where its uses of them
    are, without the rest."""
    names = names | {alias for name in names for alias in re.findall(rb"\b" + re.escape(name) + rb"[ \t]+as[ \t]+(\w+)", data)}
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(name) for name in sorted(names)) + rb")\b")
    blocks = list(_top_level_blocks(data))
    return b"".join(block for block in blocks if _is_import(block) or pattern.search(block)) + b"\n"


def _top_level_blocks(data: bytes) -> Iterator[bytes]:
    """The module's top-level statements as text, each with its decorators and its indented body
    (a statement runs to the next line that starts at column 0)."""
    starts = [match.start() for match in _TOP_LEVEL_START.finditer(data)]
    index = 0
    while index < len(starts):
        after = index + 1
        while after < len(starts) and data.startswith(b"@", starts[after - 1]):
            after += 1  # a decorator belongs to the def or class after it
        yield data[starts[index] : starts[after] if after < len(starts) else len(data)]
        index = after


def _named_blocks(data: bytes) -> dict[bytes, bytes]:
    """The module's top-level defs and classes by name, each with its decorators and body (the
    last definition of a name wins, as when the module runs)."""
    named = {}
    for block in _top_level_blocks(data):
        match = _HEADER.search(block)
        if match is not None:
            named[match.group(1)] = block
    return named


def _is_import(block: bytes) -> bool:
    return block.startswith((b"import ", b"from ", b"import\t", b"from\t"))


def _imports(data: bytes) -> list[bytes]:
    """The module's top-level imports, parenthesized ones whole."""
    return [block for block in _top_level_blocks(data) if _is_import(block)]


def _calls_without_grad(tree: ast.Module, decorators: Sequence[str]) -> dict[str, bool]:
    """For each name ``tree`` imports with ``from ... import``: whether every use of it is a call
    made with gradients disabled (and there is one). A use that is not a call (handed on as a
    value) or a call made later (in a lambda, or a def, run who knows how) counts against it."""
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    aliases = _torch_aliases(tree)
    project = {decorator.rsplit(".", 1)[-1] for decorator in decorators}
    verdict: dict[str, bool] = {}
    # (node, gradients disabled there); a def or lambda starts afresh: its body runs when called
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, disabled = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            wrapped = any(_disables_grad(decorator, aliases, project) for decorator in node.decorator_list)
            stack.extend((child, wrapped) for child in node.body)
            stack.extend((child, False) for child in (*node.decorator_list, *ast.iter_child_nodes(node.args)))
            continue
        if isinstance(node, ast.Lambda):
            stack.append((node.body, False))
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inside = disabled or any(_disables_grad(item.context_expr, aliases, project) for item in node.items)
            stack.extend((item, disabled) for item in node.items)
            stack.extend((child, inside) for child in node.body)
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported:
            verdict[node.func.id] = disabled and verdict.get(node.func.id, True)
            stack.extend((child, disabled) for child in (*node.args, *node.keywords))
            continue
        if isinstance(node, ast.Name) and node.id in imported and not isinstance(node.ctx, ast.Store):
            verdict[node.id] = False  # handed on as a value: who calls it, and how, is unknown
            continue
        stack.extend((child, disabled) for child in ast.iter_child_nodes(node))
    return verdict


def _disables_grad(expr: ast.AST, aliases: dict[str, str], project: set[str]) -> bool:
    """``torch.no_grad()``, ``torch.inference_mode()`` (or the bare context, as a decorator), or a
    call of a grad-disabling decorator defined in the project."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    if _qualified(target, aliases) in NO_GRAD_CONTEXTS:
        return True
    last = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else None
    return last in project


def _imported_names(clause: bytes) -> Iterator[bytes]:
    """``a, b as c`` / ``(a,\n b)`` -> ``a``, ``b``: the names a ``from`` import takes."""
    for part in clause.strip(b"()").replace(b"\\", b" ").split(b","):
        words = part.split(b"#", 1)[0].split()
        if words and words[0] != b"*":
            yield words[0]


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
    blocks = _named_blocks(data)
    headers = {match.group(1): match.group(2) for match in _CLASS.finditer(data)}
    kept = {ancestor for name in names for ancestor in _ancestry(name.encode(), headers)}
    classes = [block for name, block in blocks.items() if name in kept]  # in file order: bases first
    text = b"\n".join(classes)
    functions = {match.group(1) for match in _DEFINITION.finditer(data)}
    helpers = [block for name, block in blocks.items() if name in functions and re.search(rb"\b" + re.escape(name) + rb"\b", text)]
    return b"\n".join([*_imports(data), *helpers, *classes]) + b"\n"


def _imports_and_functions(data: bytes, names: set[bytes]) -> bytes:
    """The module's top-level imports and the top-level functions ``names``, cut out of its text:
    a few lines to parse instead of a whole training script."""
    blocks = _named_blocks(data)
    return b"\n".join([*_imports(data), *(block for name, block in blocks.items() if name in names)]) + b"\n"


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
