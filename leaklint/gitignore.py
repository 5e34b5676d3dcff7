"""``.gitignore`` semantics as gitignore(5) and git's ``wildmatch`` define them.

Users expect ``leaklint .`` to skip exactly what ``git status`` skips, so this follows git rather
than ``fnmatch``: ``*`` and ``?`` never cross ``/``, a slash at the start or in the middle anchors a
pattern to its file's directory, ``**`` is special only between slashes, later lines win, and a
deeper ``.gitignore`` beats a shallower one. Each pattern is compiled to a regular expression once.

Paths handed to :class:`IgnoreStack` are absolute and normalised (what ``os.path.abspath`` returns);
:class:`GitIgnore` works on ``/``-separated paths relative to its own directory. Matching is
case-sensitive (git's default on Linux). ``core.excludesFile`` is deliberately not read: it is a
per-user setting, and a lint run should give the same answer on every machine and in CI.

One deliberate divergence: git compares a pattern's literal prefix before globbing the rest, so
in ``foo**/bar`` it takes the ``**`` for a leading one and also matches ``foo/bar``. gitignore(5)
says such stars are ordinary, and this module follows the documentation there.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection, Iterable, MutableMapping
from dataclasses import dataclass

GITIGNORE = ".gitignore"
GIT_DIR = ".git"

#: POSIX bracket classes, ASCII only like git's wildmatch.
_POSIX_CLASSES: dict[str, str] = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class _Malformed(Exception):
    """A pattern git's wildmatch aborts on (unterminated ``[``, unknown ``[:class:]``, trailing
    backslash): git never matches such a pattern, so neither do we."""


# --------------------------------------------------------------------------------------------------
# One pattern


@dataclass(frozen=True)
class Pattern:
    """One compiled line of an ignore file."""

    source: str
    regex: re.Pattern[str]
    negated: bool
    #: A trailing ``/``: the pattern matches directories only.
    dir_only: bool
    #: No ``/`` in the pattern: it is matched against the last component, at any depth.
    basename_only: bool

    @classmethod
    def parse(cls, line: str) -> Pattern | None:
        """Compile one line; None for blank lines, comments and patterns that can never match."""
        source = line[:-1] if line.endswith("\r") else line
        text = _trim_trailing_spaces(source)
        if not text or text.startswith("#"):
            return None
        negated = text.startswith("!")
        if negated:
            text = text[1:]
        dir_only = text.endswith("/")
        if dir_only:
            text = text[:-1]
        basename_only = "/" not in text
        if text.startswith("/"):
            text = text[1:]
        if not text:
            return None
        try:
            regex = _translate(text)
        except _Malformed:
            return None
        return cls(source, re.compile(regex, re.DOTALL), negated, dir_only, basename_only)

    def matches(self, relpath: str, basename: str, is_dir: bool) -> bool:
        """Whether the pattern (ignoring negation) matches ``relpath``."""
        if self.dir_only and not is_dir:
            return False
        return self.regex.fullmatch(basename if self.basename_only else relpath) is not None


def _trim_trailing_spaces(line: str) -> str:
    """Drop trailing spaces that are not escaped with a backslash, exactly as git does.

    Only spaces count (not tabs), and a backslash protects the character after it.
    """
    last_space: int | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if char == " ":
            if last_space is None:
                last_space = index
        else:
            if char == "\\":
                index += 1
            if index >= len(line):
                break
            last_space = None
        index += 1
    return line if last_space is None else line[:last_space]


def _translate(pattern: str) -> str:
    """The regular expression for a wildmatch pattern (``WM_PATHNAME``), to be full-matched."""
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if index + 1 >= len(pattern):
                raise _Malformed("trailing backslash")
            parts.append(re.escape(pattern[index + 1]))
            index += 2
        elif char == "*":
            regex, index = _translate_stars(pattern, index)
            parts.append(regex)
        elif char == "?":
            parts.append("[^/]")
            index += 1
        elif char == "[":
            regex, index = _translate_class(pattern, index)
            parts.append(regex)
        else:
            parts.append(re.escape(char))
            index += 1
    return "".join(parts)


def _translate_stars(pattern: str, start: int) -> tuple[str, int]:
    """A run of ``*`` starting at ``start``: the regex and the index just after what it consumed.

    Two or more stars with a slash (or the pattern's edge) on both sides cross directories:
    ``**/`` matches zero or more leading directories and a trailing ``/**`` everything inside.
    Anywhere else, any number of stars is one ``*``, which stays within a path component.
    """
    end = start
    while end < len(pattern) and pattern[end] == "*":
        end += 1
    if end - start >= 2 and (start == 0 or pattern[start - 1] == "/"):
        if end == len(pattern):
            return ".*", end
        if pattern[end] == "/":
            return "(?:.*/)?", end + 1
        if pattern.startswith("\\/", end):
            return "(?:.*/)?", end + 2
    return "[^/]*", end


def _translate_class(pattern: str, start: int) -> tuple[str, int]:
    """A ``[...]`` class starting at ``start``, parsed the way wildmatch parses it.

    ``!`` or ``^`` first negates; ``]`` first is literal; ``-`` makes a range unless first or last;
    a backslash escapes; ``[:name:]`` is a POSIX class. A class never matches ``/``.
    """
    index = start + 1
    negated = index < len(pattern) and pattern[index] in "!^"
    if negated:
        index += 1
    items: list[str] = []
    previous: str | None = None  # the last single character, the start of a possible range
    first = True
    while True:
        if index >= len(pattern):
            raise _Malformed("unterminated character class")
        char = pattern[index]
        if char == "]" and not first:
            break
        first = False
        if char == "\\":
            index += 1
            if index >= len(pattern):
                raise _Malformed("trailing backslash")
            previous = pattern[index]
            items.append(re.escape(previous))
        elif char == "-" and previous is not None and _continues_range(pattern, index):
            index += 1
            if pattern[index] == "\\":
                index += 1
                if index >= len(pattern):
                    raise _Malformed("trailing backslash")
            low, high = previous, pattern[index]
            if low <= high:  # an inverted range matches nothing, as in wildmatch
                items.append(f"{re.escape(low)}-{re.escape(high)}")
            previous = None
        elif char == "[" and pattern.startswith(":", index + 1):
            posix, index = _posix_class(pattern, index)
            items.append(posix if posix is not None else re.escape("["))
            previous = None if posix is not None else "["
        else:
            previous = char
            items.append(re.escape(char))
        index += 1
    body = "".join(items)
    if negated:
        return f"[^/{body}]", index + 1
    if not body:
        return "(?!)", index + 1
    return f"(?!/)[{body}]", index + 1


def _continues_range(pattern: str, dash: int) -> bool:
    """A ``-`` after a character makes a range unless it is the last thing in the class."""
    return pattern[dash + 1 : dash + 2] not in ("", "]")


def _posix_class(pattern: str, start: int) -> tuple[str | None, int]:
    """``[:name:]`` at ``start``: its ranges and the index of its final ``]``.

    When the brackets do not close as ``:]`` the ``[`` is an ordinary character: (None, start).
    """
    close = pattern.find("]", start + 2)
    if close == -1:
        raise _Malformed("unterminated character class")
    if close - 1 < start + 2 or pattern[close - 1] != ":":
        return None, start
    name = pattern[start + 2 : close - 1]
    if name not in _POSIX_CLASSES:
        raise _Malformed(f"unknown character class [:{name}:]")
    return _POSIX_CLASSES[name], close


# --------------------------------------------------------------------------------------------------
# One file


class GitIgnore:
    """The patterns of one ignore file, relative to its directory ``base``."""

    def __init__(self, patterns: Iterable[Pattern] = (), base: str = "") -> None:
        self.patterns: tuple[Pattern, ...] = tuple(patterns)
        self.base = base

    @classmethod
    def from_lines(cls, lines: Iterable[str], base: str = "") -> GitIgnore:
        patterns = (Pattern.parse(line) for line in lines)
        return cls((pattern for pattern in patterns if pattern is not None), base)

    @classmethod
    def from_text(cls, text: str, base: str = "") -> GitIgnore:
        """Parse a whole file; git splits on ``\\n`` only and skips a UTF-8 byte order mark."""
        return cls.from_lines(text.removeprefix("\ufeff").split("\n"), base)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> GitIgnore:
        """Read ``path``; a missing, unreadable or non-regular file gives an empty GitIgnore.

        git never follows a symlinked ``.gitignore`` inside the work tree (``follow_symlinks=False``
        for those); ``info/exclude`` may be a link. The file type is checked before opening, so a
        FIFO named ``.gitignore`` cannot hang the run.
        """
        path = os.path.abspath(path)
        base = os.path.dirname(path)
        text = _read_regular_file(path, follow_symlinks=follow_symlinks)
        return cls.from_text(text, base) if text is not None else cls((), base)

    def match(self, relpath: str, is_dir: bool) -> bool | None:
        """True if ignored, False if re-included by a negation, None if no pattern matches.

        ``relpath`` is relative to this file's directory, ``/``-separated. The last matching
        line decides.
        """
        basename = relpath.rpartition("/")[2]
        for pattern in reversed(self.patterns):
            if pattern.matches(relpath, basename, is_dir):
                return not pattern.negated
        return None

    def __repr__(self) -> str:
        return f"GitIgnore({len(self.patterns)} patterns, base={self.base!r})"


def _read_regular_file(path: str, *, follow_symlinks: bool) -> str | None:
    try:
        info = os.stat(path) if follow_symlinks else os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except (OSError, ValueError):
        return None
    # surrogateescape round-trips undecodable bytes the same way os.scandir names do.
    return data.decode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------------------------------
# Repositories


def find_repository_root(start: str | os.PathLike[str]) -> str | None:
    """The nearest directory at or above ``start`` that holds ``.git`` (a directory, or the file a
    worktree or submodule has), or None when ``start`` is not inside a repository."""
    directory = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(directory, GIT_DIR)):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _info_exclude_path(repo: str) -> str | None:
    """``info/exclude`` of the repository at ``repo``, following a ``.git`` file to its git dir
    and a worktree's ``commondir`` to the shared one (where ``info/`` lives)."""
    dot_git = os.path.join(repo, GIT_DIR)
    git_dir = dot_git
    if not os.path.isdir(dot_git):
        text = _read_regular_file(dot_git, follow_symlinks=True)
        if text is None or not text.startswith("gitdir:"):
            return None
        git_dir = os.path.join(repo, text[len("gitdir:") :].strip())
    common = _read_regular_file(os.path.join(git_dir, "commondir"), follow_symlinks=True)
    if common is not None and common.strip():
        git_dir = os.path.join(git_dir, common.strip())
    return os.path.normpath(os.path.join(git_dir, "info", "exclude"))


# --------------------------------------------------------------------------------------------------
# The stack a directory walk carries


class IgnoreStack:
    """The ignore files that govern one directory, least specific first.

    Immutable: :meth:`enter` returns a new stack, so sibling directories never see each other's
    ``.gitignore``. Deeper files beat shallower ones, and every ``.gitignore`` beats the
    repository's ``info/exclude``. Entering a nested repository starts afresh, as git would.
    ``cache`` (file path -> GitIgnore) lets several stacks of one run share the files they read.
    """

    __slots__ = ("_layers", "_repo", "_cache")

    def __init__(
        self,
        layers: Iterable[GitIgnore] = (),
        *,
        repo: str | None = None,
        cache: MutableMapping[str, GitIgnore] | None = None,
    ) -> None:
        self._layers: tuple[GitIgnore, ...] = tuple(layer for layer in layers if layer.patterns)
        self._repo = repo
        self._cache: MutableMapping[str, GitIgnore] = cache if cache is not None else {}

    @property
    def layers(self) -> tuple[GitIgnore, ...]:
        return self._layers

    @classmethod
    def for_repository(
        cls, repo: str, *, cache: MutableMapping[str, GitIgnore] | None = None
    ) -> IgnoreStack:
        """The stack above the repository root: just ``info/exclude``, when there is one."""
        repo = os.path.abspath(repo)
        stack = cls(repo=repo, cache=cache)
        exclude = _info_exclude_path(repo)
        if exclude is None:
            return stack
        info = stack._load(exclude, follow_symlinks=True)
        # Its patterns are relative to the work tree, not to the directory the file lives in.
        return stack._with(GitIgnore(info.patterns, repo))

    @classmethod
    def locate(
        cls,
        path: str | os.PathLike[str],
        *,
        is_dir: bool,
        cache: MutableMapping[str, GitIgnore] | None = None,
    ) -> tuple[IgnoreStack, bool]:
        """The stack governing ``path`` and whether git would ignore ``path``.

        The stack holds the ignore files from the repository root down to ``path``'s parent (for
        a directory, :meth:`enter` it before matching its entries). Outside a repository only
        files at and below the directory being walked count: none for a directory, its own
        directory's ``.gitignore`` for a file. ``path`` is ignored when it, or a directory on
        the way down to it, matches: git cannot re-include anything below an ignored directory.
        """
        path = os.path.abspath(path)
        start = path if is_dir else os.path.dirname(path)
        repo = find_repository_root(start)
        top = repo if repo is not None else start
        stack = cls.for_repository(repo, cache=cache) if repo is not None else cls(cache=cache)
        ignored = False
        for directory in _directories_between(top, path):
            if directory != top and stack.match(directory, is_dir=True):
                ignored = True
            stack = stack.enter(directory)
        if path != top and stack.match(path, is_dir=is_dir):
            ignored = True
        return stack, ignored

    def enter(self, directory: str, names: Collection[str] | None = None) -> IgnoreStack:
        """The stack for the entries of ``directory``: this one plus ``directory/.gitignore``.

        ``names`` (the directory's listing, when the caller has it) saves probing for
        ``.gitignore`` and ``.git`` in directories that have neither.
        """
        if names is not None:
            has_git, has_gitignore = GIT_DIR in names, GITIGNORE in names
        else:
            has_git, has_gitignore = os.path.exists(os.path.join(directory, GIT_DIR)), True
        stack = self
        if has_git and directory != self._repo:
            stack = IgnoreStack.for_repository(directory, cache=self._cache)
        if not has_gitignore:
            return stack
        ignore = stack._load(os.path.join(directory, GITIGNORE), follow_symlinks=False)
        return stack._with(ignore)

    def match(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (absolute, normalised) is ignored by its own name.

        The deepest file with an opinion decides. Parent directories are not checked: a walk
        never enters an ignored directory, and :meth:`locate` checks them for named paths.
        """
        for layer in reversed(self._layers):
            relpath = _relative_to(path, layer.base)
            if relpath:
                verdict = layer.match(relpath, is_dir)
                if verdict is not None:
                    return verdict
        return False

    def _with(self, layer: GitIgnore) -> IgnoreStack:
        if not layer.patterns:
            return self
        return IgnoreStack((*self._layers, layer), repo=self._repo, cache=self._cache)

    def _load(self, path: str, *, follow_symlinks: bool) -> GitIgnore:
        ignore = self._cache.get(path)
        if ignore is None:
            ignore = self._cache[path] = GitIgnore.from_file(path, follow_symlinks=follow_symlinks)
        return ignore

    def __repr__(self) -> str:
        return f"IgnoreStack({list(self._layers)!r}, repo={self._repo!r})"


def _relative_to(path: str, base: str) -> str:
    """``path`` relative to ``base`` with ``/`` separators, or "" when it is not below ``base``."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return ""
    relative = path[len(prefix) :]
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


def _directories_between(top: str, path: str) -> list[str]:
    """``top`` and each directory below it that is an ancestor of ``path``; empty when ``path`` is
    ``top`` itself (or, defensively, not below it)."""
    relative = _relative_to(path, top)
    if not relative:
        return []
    directories = [top]
    for part in relative.split("/")[:-1]:
        directories.append(os.path.join(directories[-1], part))
    return directories


__all__ = [
    "GITIGNORE",
    "GitIgnore",
    "IgnoreStack",
    "Pattern",
    "find_repository_root",
]
