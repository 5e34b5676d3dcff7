"""The real-code corpus: the pinned repositories of repos.toml, and how its lines are counted.

Shared by assemble.py (which builds the corpus) and score.py (which reports findings per 10k
lines), so that both count the same lines the same way.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - leaklint's own dependencies bring tomli on 3.10
    import tomli as tomllib

CONFIG = Path(__file__).with_name("repos.toml")
#: What the corpus keeps of each repository: Python sources and notebooks, nothing else.
SUFFIXES = (".py", ".ipynb")
#: Written into a finished repository's folder; holds the commit so a re-pin rebuilds it.
COMPLETE_MARKER = ".complete"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+?)(?:\.git)?/?")


class ConfigError(Exception):
    """repos.toml cannot be used; the message names the entry and the reason."""


@dataclass(frozen=True)
class Repo:
    """One pinned repository and the part of it the corpus keeps."""

    name: str
    url: str
    commit: str
    style: str
    #: Folders or files to keep, relative to the repository root; empty keeps everything.
    paths: tuple[str, ...] = ()
    #: Folders or files to leave out of ``paths``.
    exclude: tuple[str, ...] = ()

    @property
    def owner_and_name(self) -> tuple[str, str]:
        match = _GITHUB.fullmatch(self.url)
        assert match is not None  # checked when the config is read
        return match.group(1), match.group(2)

    def keeps(self, path: str) -> bool:
        """Whether the file ``path`` (relative to the repository root) belongs to the corpus."""
        if not path.endswith(SUFFIXES):
            return False
        inside = lambda prefix: path == prefix or path.startswith(prefix + "/")  # noqa: E731
        if self.paths and not any(inside(prefix) for prefix in self.paths):
            return False
        return not any(inside(prefix) for prefix in self.exclude)


def load_repos(config: Path = CONFIG) -> list[Repo]:
    """Read and check repos.toml; every problem is a :class:`ConfigError` naming the entry."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{config}: cannot read it ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{config}: not valid TOML ({error})") from None
    entries = data.get("repo")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{config}: no [[repo]] entries")
    repos = [_repo(config, number, entry) for number, entry in enumerate(entries, start=1)]
    seen: set[str] = set()
    for repo in repos:
        if repo.name in seen:
            raise ConfigError(f"{config}: the name {repo.name!r} is used twice")
        seen.add(repo.name)
    return repos


def _repo(config: Path, number: int, entry: object) -> Repo:
    where = f"{config}: [[repo]] #{number}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: not a table")
    unknown = set(entry) - {"name", "url", "commit", "style", "paths", "exclude"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("name", "url", "commit", "style"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise ConfigError(f"{where}: '{key}' must be a non-empty string")
    where = f"{config}: repo {entry['name']!r}"
    if not _NAME.fullmatch(entry["name"]):
        raise ConfigError(f"{where}: the name may hold only letters, digits, '.', '_' and '-'")
    if not _GITHUB.fullmatch(entry["url"]):
        raise ConfigError(f"{where}: the url must be https://github.com/OWNER/NAME")
    if not _COMMIT.fullmatch(entry["commit"]):
        raise ConfigError(f"{where}: the commit must be 40 lowercase hex digits")
    return Repo(
        name=entry["name"],
        url=entry["url"],
        commit=entry["commit"],
        style=entry["style"],
        paths=_relative_paths(where, entry, "paths"),
        exclude=_relative_paths(where, entry, "exclude"),
    )


def _relative_paths(where: str, entry: dict, key: str) -> tuple[str, ...]:
    values = entry.get(key, [])
    if not isinstance(values, list) or not all(isinstance(value, str) and value for value in values):
        raise ConfigError(f"{where}: '{key}' must be a list of non-empty strings")
    for value in values:
        path = PurePosixPath(value)
        if path.is_absolute() or ".." in path.parts or value != str(path):
            raise ConfigError(f"{where}: '{key}' entry {value!r} must be a plain relative path")
    return tuple(values)


@dataclass
class LineCount:
    """Files and lines of one folder: ``.py`` lines are newline characters; a notebook's lines are
    the lines of its code cells (what leaklint lints), not of its JSON."""

    py_files: int = 0
    py_lines: int = 0
    notebooks: int = 0
    notebook_lines: int = 0

    @property
    def lines(self) -> int:
        return self.py_lines + self.notebook_lines

    def __iadd__(self, other: LineCount) -> LineCount:
        self.py_files += other.py_files
        self.py_lines += other.py_lines
        self.notebooks += other.notebooks
        self.notebook_lines += other.notebook_lines
        return self


def count_lines(folder: Path) -> LineCount:
    count = LineCount()
    for path in sorted(folder.rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        if path.suffix == ".py":
            count.py_files += 1
            count.py_lines += file_lines(path)
        else:
            count.notebooks += 1
            count.notebook_lines += file_lines(path)
    return count


def file_lines(path: Path) -> int:
    """A .py file's newline characters, or a notebook's code-cell lines; 0 if it is missing."""
    try:
        data = path.read_bytes()
    except OSError:
        return 0
    return notebook_code_lines(data) if path.suffix == ".ipynb" else data.count(b"\n")


def notebook_code_lines(data: bytes) -> int:
    """Lines in the code cells of a notebook; 0 for a file that is not a readable notebook."""
    cells = notebook_cells(data)
    return sum(len(source.splitlines()) for kind, source in cells if kind == "code")


def notebook_cells(data: bytes) -> list[tuple[str, str]]:
    """(cell type, source) of every cell, in order (cell N is item N-1); [] if unreadable."""
    try:
        notebook = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return []
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return []
    result = []
    for cell in cells:
        cell = cell if isinstance(cell, dict) else {}
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        result.append((str(cell.get("cell_type", "")), source if isinstance(source, str) else ""))
    return result
