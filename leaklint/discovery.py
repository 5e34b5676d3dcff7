"""Turn command-line paths into the files to lint, plus one error per path that cannot be used.

Directories are walked in sorted order for stable output, picking up Python files and Jupyter
notebooks (``.ipynb``) and skipping what the settings exclude and what ``.gitignore`` ignores. A file named explicitly is linted whatever its name, since the user
asked for it, unless ``force_exclude`` (pre-commit passes every staged file by name). Nothing here
opens a file to lint: the file type is checked with ``stat`` first, so a FIFO cannot hang the run,
and a bad path becomes a :class:`FileError` instead of an exception.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from leaklint.config import Settings, forget_real_paths
from leaklint.findings import ErrorKind, FileError
from leaklint.gitignore import GitIgnore, IgnoreStack

STDIN = "-"
PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"
#: What a directory walk picks up: Python files and Jupyter notebooks (see leaklint/notebook.py).
LINTED_SUFFIXES = (*PYTHON_SUFFIXES, NOTEBOOK_SUFFIX)

NO_SUCH_FILE = "no such file or directory"
BROKEN_LINK = "broken symbolic link"
LINK_LOOP = "symbolic link loop"
PERMISSION_DENIED = "permission denied"
NOT_REGULAR = "not a regular file"


@dataclass(frozen=True)
class Discovery:
    """What to lint, in report order, and the paths that could not be used."""

    files: tuple[str, ...]
    errors: tuple[FileError, ...]


def discover(paths: Sequence[str], settings: Settings, *, force_exclude: bool = False) -> Discovery:
    """The files named by ``paths`` (files, directories, or ``-`` for stdin).

    Files come back sorted by displayed path, deduplicated by real path (the first way a file was
    reached names it), with ``-`` first when given. Errors never stop discovery of other paths.
    """
    forget_real_paths()
    walker = _Walker(settings, force_exclude)
    for path in paths:
        walker.add_argument(path)
    return walker.result()


@dataclass(frozen=True)
class _Directory:
    """A directory to list, under its three names."""

    display: str  # as reports show it
    path: str  # absolute and normalised: what ignore files are matched against
    real: str  # symlinks resolved: what duplicates are detected by
    ignores: IgnoreStack  # the ignore files that govern this directory's entries
    #: False inside a directory named explicitly that the settings exclude: every path below
    #: it would match too, and the user asked for it.
    apply_excludes: bool


class _Walker:
    """Collects files and errors for one :func:`discover` call."""

    def __init__(self, settings: Settings, force_exclude: bool) -> None:
        self._settings = settings
        self._force_exclude = force_exclude
        self._files: dict[str, str] = {}  # real path -> display path; the first one wins
        self._errors: list[FileError] = []
        self._stdin = False
        self._ignore_cache: dict[str, GitIgnore] = {}

    # ---- command-line arguments ------------------------------------------------------------------

    def add_argument(self, argument: str) -> None:
        if argument == STDIN:
            self._stdin = True
            return
        display = display_path(argument)
        mode = self._explicit_mode(argument, display)
        if mode is None:
            return
        path = os.path.abspath(argument)
        if stat.S_ISDIR(mode):
            self._add_directory_argument(display, path)
        elif stat.S_ISREG(mode):
            self._add_file_argument(display, path)
        else:
            self._error(display, ErrorKind.IO, NOT_REGULAR)

    def _explicit_mode(self, argument: str, display: str) -> int | None:
        """The file type ``argument`` resolves to, or None after recording why it has none."""
        if not argument:
            self._error(display, ErrorKind.NOT_FOUND, NO_SUCH_FILE)
            return None
        try:
            info = os.lstat(argument)
            if stat.S_ISLNK(info.st_mode):
                info = _stat_link_target(argument)
        except (OSError, ValueError) as error:
            self._os_error(display, error)
            return None
        return info.st_mode

    def _add_file_argument(self, display: str, path: str) -> None:
        if self._force_exclude and self._named_path_is_skipped(display, path, is_dir=False):
            return
        self._add_file(display, os.path.realpath(path))

    def _add_directory_argument(self, display: str, path: str) -> None:
        ignores, ignored = self._locate_ignores(path)
        excluded = self._settings.is_excluded(display)
        if self._force_exclude and (excluded or ignored):
            return
        root = _Directory(display, path, os.path.realpath(path), ignores, not excluded)
        self._walk(root)

    def _named_path_is_skipped(self, display: str, path: str, *, is_dir: bool) -> bool:
        """Whether ``--force-exclude`` drops a path named on the command line."""
        if self._settings.is_excluded(display):
            return True
        return self._settings.respect_gitignore and IgnoreStack.locate(
            path, is_dir=is_dir, cache=self._ignore_cache
        )[1]

    def _locate_ignores(self, path: str) -> tuple[IgnoreStack, bool]:
        if not self._settings.respect_gitignore:
            return IgnoreStack(), False
        return IgnoreStack.locate(path, is_dir=True, cache=self._ignore_cache)

    # ---- walking ---------------------------------------------------------------------------------

    def _walk(self, root: _Directory) -> None:
        """Depth-first with entries in sorted order, so "the first way a file was reached" is
        well defined. The stack of suspended listings keeps deep trees off the recursion limit."""
        stack = [self._scan(root)]
        while stack:
            subdirectory = next(stack[-1], None)
            if subdirectory is None:
                stack.pop()
            else:
                stack.append(self._scan(subdirectory))

    def _scan(self, directory: _Directory) -> Iterator[_Directory]:
        """Collect the lintable files of one directory, yielding each subdirectory to walk in turn."""
        try:
            with os.scandir(directory.path) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            self._os_error(directory.display, error)
            return
        ignores = directory.ignores
        if self._settings.respect_gitignore:
            ignores = ignores.enter(directory.path, {entry.name for entry in entries})
        for entry in entries:
            display = join_display(directory.display, entry.name)
            try:
                child = self._visit(entry, display, directory, ignores)
            except OSError as error:
                self._os_error(display, error)
                continue
            if child is not None:
                yield child

    def _visit(
        self, entry: os.DirEntry[str], display: str, parent: _Directory, ignores: IgnoreStack
    ) -> _Directory | None:
        """Handle one directory entry; a subdirectory to walk comes back."""
        if entry.is_symlink():
            self._visit_symlink(entry, display, parent, ignores)
        elif entry.is_dir(follow_symlinks=False):
            if not self._skipped(display, entry.path, True, parent, ignores):
                real = os.path.join(parent.real, entry.name)
                return _Directory(display, entry.path, real, ignores, parent.apply_excludes)
        elif entry.is_file(follow_symlinks=False) and is_lintable_file(entry.name):
            if not self._skipped(display, entry.path, False, parent, ignores):
                self._add_file(display, os.path.join(parent.real, entry.name))
        return None

    def _visit_symlink(
        self, entry: os.DirEntry[str], display: str, parent: _Directory, ignores: IgnoreStack
    ) -> None:
        """A link named like a lintable file is linted by its own name if it points at a regular
        file. Links to directories are never followed, so a walk cannot loop."""
        if not is_lintable_file(entry.name):
            return
        if self._skipped(display, entry.path, False, parent, ignores):
            return
        try:
            target = _stat_link_target(entry.path)
        except _BrokenLink as error:
            if not entry.name.startswith(".#"):  # editors' lock files are dangling links by design
                self._os_error(display, error)
            return
        if stat.S_ISREG(target.st_mode):
            self._add_file(display, os.path.realpath(entry.path))

    def _skipped(
        self, display: str, path: str, is_dir: bool, parent: _Directory, ignores: IgnoreStack
    ) -> bool:
        if parent.apply_excludes and self._settings.is_excluded(display):
            return True
        return self._settings.respect_gitignore and ignores.match(path, is_dir)

    # ---- results ---------------------------------------------------------------------------------

    def _add_file(self, display: str, real: str) -> None:
        self._files.setdefault(real, display)

    def _error(self, display: str, kind: ErrorKind, reason: str) -> None:
        self._errors.append(FileError(display, kind, reason))

    def _os_error(self, display: str, error: OSError | ValueError) -> None:
        kind, reason = describe_os_error(error)
        self._error(display, kind, reason)

    def result(self) -> Discovery:
        files = sorted(self._files.values())
        if self._stdin:
            files.insert(0, STDIN)
        errors = sorted(set(self._errors), key=FileError.sort_key)
        return Discovery(tuple(files), tuple(errors))


# --------------------------------------------------------------------------------------------------
# Small helpers


class _BrokenLink(FileNotFoundError):
    """A symlink whose target does not exist: reported apart from a path that does not exist."""


def _stat_link_target(path: str) -> os.stat_result:
    """``os.stat`` of a symlink's target, raising :class:`_BrokenLink` for a dangling link."""
    try:
        return os.stat(path)
    except FileNotFoundError as error:
        raise _BrokenLink(errno.ENOENT, BROKEN_LINK, path) from error


def describe_os_error(error: OSError | ValueError) -> tuple[ErrorKind, str]:
    """A short, stable, lower-case reason for a failed stat or listing."""
    if isinstance(error, ValueError):  # an embedded NUL byte in a path
        return ErrorKind.IO, "invalid path"
    code = error.errno
    if isinstance(error, _BrokenLink):
        return ErrorKind.NOT_FOUND, BROKEN_LINK
    if code == errno.ENOENT:
        return ErrorKind.NOT_FOUND, NO_SUCH_FILE
    if code == errno.ENOTDIR:
        return ErrorKind.NOT_FOUND, "not a directory"
    if code == errno.ELOOP:
        return ErrorKind.IO, LINK_LOOP
    if code in (errno.EACCES, errno.EPERM):
        return ErrorKind.IO, PERMISSION_DENIED
    return ErrorKind.IO, (error.strerror or str(error)).lower()


def is_lintable_file(name: str) -> bool:
    """Whether a directory walk lints a file of this name: Python source or a notebook."""
    return name.endswith(LINTED_SUFFIXES)


def is_notebook_path(path: str) -> bool:
    """Whether ``path`` (as reported: ``--stdin-filename`` counts) names a Jupyter notebook, which
    is linted cell by cell rather than as Python source."""
    return path.endswith(NOTEBOOK_SUFFIX)


def display_path(argument: str) -> str:
    """An argument as reports show it: normalised (``./a/`` -> ``a``), ``/``-separated, and
    relative or absolute just as the user wrote it."""
    if not argument:
        return argument
    path = os.path.normpath(argument)
    return path.replace(os.sep, "/") if os.sep != "/" else path


def join_display(directory: str, name: str) -> str:
    """``a`` + ``x.py`` -> ``a/x.py``; the current directory adds no ``./`` prefix."""
    if directory == ".":
        return name
    if directory.endswith("/"):
        return directory + name
    return f"{directory}/{name}"
