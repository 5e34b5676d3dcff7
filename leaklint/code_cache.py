"""Keep code that Python compiles afresh in every run between runs, the way ``.pyc`` files do.

Two kinds of source text are compiled at run time, in every process, and are the same each time:

- **Dataclass methods.** libcst's ~250 node classes are frozen dataclasses, and leaklint has about
  forty of its own. For each, the ``dataclass`` decorator writes the source of ``__init__``,
  ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` and compiles it:
  about 1,200 compilations, 0.12 s of a 0.4 s one-file run on Python 3.11.
- **Functions leaklint writes per node class** (:func:`compiled`): the converters to the mirror,
  the child listers of the walk and of the gate (a hundred-odd, 10-15 ms of a run with findings).

This keeps their code in one file in the user's cache directory, keyed by the exact text:

- while the ``leaklint`` command runs (:func:`reusing_compiled_code` around it) or libcst is
  imported (:func:`import_libcst`), ``exec`` inside the ``dataclasses`` module and
  :func:`compiled` look the text up; a text found gets its stored code object, which is what
  compiling that text gives (same text, same interpreter, no ``__future__`` flags);
- a text not found is compiled as before, and the file is rewritten with it for the next run
  (once it holds more than 5,000 texts, with only those the run used: edited classes leave
  stale ones behind);
- only classes defined in ``leaklint`` and ``libcst`` modules are kept (a plugin's or torch's pass
  through untouched), so the file stays about 1 MB, and it is read only when a text is looked up;
- the file's name carries the interpreter's bytecode tag and libcst's version, its first bytes
  are the interpreter's magic number (as in a ``.pyc``), and it is replaced atomically. A file
  that does not load is ignored; a directory that cannot be written costs nothing but the speed.

``LEAKLINT_CODE_CACHE=off`` turns this off; any other value names the directory to keep it in.
It is not the result cache (``--no-cache`` leaves it alone, as ``.pyc`` files are left alone).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
from types import CodeType, ModuleType
from typing import Any, Iterator

#: The environment variable that moves (a directory) or disables (``off``) the code cache.
ENVIRONMENT_VARIABLE = "LEAKLINT_CODE_CACHE"
_OFF = ("off", "0", "false", "no")
#: The packages whose dataclasses are kept.
KEPT_PACKAGES = frozenset({"leaklint", "libcst"})
#: A file holding more texts than this (about four times what leaklint and libcst define) is
#: rewritten with only the texts the run used: edited or upgraded classes leave stale texts behind.
MAX_STORED_TEXTS = 5000


class CompiledCode:
    """The code objects stored in ``path`` by source text (read on first use), and what the
    block did with them: texts answered from the file, texts compiled (stored when it ends)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.reused = 0
        self.compiled: dict[str, CodeType] = {}
        self._codes: dict[str, CodeType] | None = None
        self._used: set[str] = set()

    def code_for(self, source: str) -> CodeType:
        if self._codes is None:
            self._codes = _load(self.path) if self.path else {}
        self._used.add(source)
        code = self._codes.get(source)
        if code is not None:
            self.reused += 1
            return code
        code = _compile(source)
        self._codes[source] = self.compiled[source] = code
        return code

    def store(self) -> None:
        """Rewrite the file with what it held and what was compiled, if anything was (only what
        this run used, once the file has grown past :data:`MAX_STORED_TEXTS`)."""
        if not (self.path and self.compiled and self._codes is not None):
            return
        codes = self._codes
        if len(codes) > MAX_STORED_TEXTS:
            codes = {text: codes[text] for text in self._used}
        _store(self.path, codes)


#: The store of the innermost block that shadows ``exec`` (:func:`compiled` uses it), if any.
_active: CompiledCode | None = None


def compiled(source: str) -> CodeType:
    """The code of ``source``, a function written by leaklint for a node class: from the stored
    file while the command runs, else compiled now. ``exec`` it in the namespace it needs."""
    if _active is not None:
        return _active.code_for(source)
    return _compile(source)


def _compile(source: str) -> CodeType:
    """What ``exec(source)`` compiles in a module without ``__future__`` imports."""
    return compile(source, "<string>", "exec", dont_inherit=True)


def import_libcst() -> ModuleType:
    """``import libcst``, reusing the stored dataclass code (a no-op once libcst is imported)."""
    if "libcst" not in sys.modules:
        with reusing_compiled_code(cache_file()):
            import libcst  # noqa: F401
    return sys.modules["libcst"]


@contextlib.contextmanager
def reusing_compiled_code(path: str | None, packages: frozenset[str] = KEPT_PACKAGES) -> Iterator[CompiledCode]:
    """While the block runs, the dataclasses of ``packages`` take their methods' code from
    ``path``, and so does :func:`compiled` (None: compile as usual); newly compiled code is
    added to the file afterwards.
    Inside another such block (the command's, around an ``import_libcst``) this one does nothing."""
    import dataclasses

    store = CompiledCode(path)
    namespace = vars(dataclasses)
    if path is None or "exec" in namespace:  # already shadowed, by an outer block or someone else
        yield store
        return

    def exec_reusing_code(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if globals is None:  # as exec does: the caller's namespaces, not this function's
            caller = sys._getframe(1)
            globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
        if type(source) is str and _module_package(globals) in packages:
            source = store.code_for(source)
        exec(source, globals, locals)  # noqa: S102 - the dataclass decorator's own call

    global _active
    namespace["exec"] = exec_reusing_code
    _active = store
    try:
        yield store
    finally:
        del namespace["exec"]
        _active = None
        store.store()


def _module_package(namespace: Any) -> str | None:
    """The top-level package of the module whose namespace this is (``dataclasses`` passes the
    namespace of the class's module)."""
    name = namespace.get("__name__") if isinstance(namespace, dict) else None
    return name.partition(".")[0] if isinstance(name, str) else None


# --- where the file lives ---------------------------------------------------------------------
def cache_file() -> str | None:
    """The file for this interpreter and libcst release, or None when the cache is off."""
    from leaklint.analysis.family import installed_libcst_version

    directory = cache_directory()
    if directory is None:
        return None
    tag = sys.implementation.cache_tag or "python"
    return os.path.join(directory, f"compiled-code.{tag}.libcst-{installed_libcst_version() or 'unknown'}.marshal")


def cache_directory() -> str | None:
    """``LEAKLINT_CODE_CACHE``, else the user's cache directory (``~/.cache/leaklint``)."""
    chosen = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if chosen.lower() in _OFF:
        return None
    if chosen:
        return chosen
    from leaklint.user_cache import user_cache_directory

    try:
        directory = user_cache_directory()
    except (RuntimeError, KeyError, OSError):  # no home directory to be found: no cache
        return None
    # Created below the home directory (or XDG_CACHE_HOME's parent), never in place of it.
    return str(directory) if directory.parent.parent.is_dir() else None


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER


def _load(path: str) -> dict[str, CodeType]:
    """The stored code objects, or none when the file is missing, from another interpreter, or
    damaged (whatever ``marshal`` makes of it must be a dict of texts to code objects)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    magic = _magic()
    if not data.startswith(magic):
        return {}
    try:
        codes = marshal.loads(data[len(magic) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if type(codes) is not dict or not all(type(k) is str and type(v) is CodeType for k, v in codes.items()):
        return {}
    return codes


def _store(path: str, codes: dict[str, CodeType]) -> None:
    """Write atomically: a run that reads while another writes sees the old file or the new one."""
    from pathlib import Path

    from leaklint.cache import atomic_write

    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, _magic() + marshal.dumps(codes))
    except OSError:
        pass
