"""A result cache, so that a run over unchanged files costs a hash and a small read per file.

One entry per linted file, named by a key that covers everything its result depends on:

* the file's bytes (BLAKE2b of the content, not its mtime: a checkout or a ``touch`` that leaves
  the bytes alone still hits),
* the path it is reported as (findings carry it) and the per-file-ignores that match it,
* the leaklint version and the code of leaklint and its rules (size and mtime of every module, so
  an editable install that changes a rule never serves stale findings),
* the enabled rule codes, with the module of each (a plug-in rule counts too),
* every setting that can change a file's result (min-confidence, max-file-size, the fix settings,
  and any setting added later: settings are in the key unless listed in :data:`_RUN_ONLY_SETTINGS`).

Entries are JSON files under ``<cache dir>/v2/<key[:2]>/<key>.json``. They are written to a
temporary file and moved into place with :func:`os.replace`, so a concurrent run reads either a
whole entry or none; two runs writing the same key write the same content. An entry is trusted only
when its checksum (BLAKE2b of the rest of the entry) matches and every field has the type and range
a result has: a flipped byte or a hand edit (``"line": "14"``) would otherwise be served as this
file's findings. An entry that cannot be read, decoded or trusted (truncated, garbled, corrupted,
from another format) is a miss, never an error: the file is linted afresh and the entry rewritten.
When the cache directory cannot be created or written, caching turns itself off for the run after
one warning.

The user's own cache directory (:func:`user_cache_directory`) holds what is not a project's: the
last measurements of ``leaklint verify``, which ``leaklint rule`` shows.

Only whole results are cached: the findings (with their fixes, so ``--fix`` could replay them) and
the errors that follow from the file's content (syntax, decoding, nesting, internal errors). Read
errors and refusals by size are not cached: they cost nothing to find again. Standard input is
never cached.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from leaklint import __version__
from leaklint.findings import (
    Applicability,
    Confidence,
    ErrorKind,
    FileError,
    Finding,
    Fix,
    Severity,
    TextEdit,
)

if TYPE_CHECKING:
    from leaklint.config import Settings
    from leaklint.rule import Rule

#: Bump when the entry layout changes; old entries then sit in another folder, unread.
#: 2: entries carry a checksum; findings and fix edits carry a notebook cell.
CACHE_FORMAT = 2
DEFAULT_CACHE_DIR_NAME = ".leaklint_cache"
#: Any value but "" or "0" turns the cache off, like --no-cache.
NO_CACHE_ENV = "LEAKLINT_NO_CACHE"
#: Settings that decide which files are linted, or where the cache lives, but not what a given
#: file's result is. Every other setting is part of the key.
_RUN_ONLY_SETTINGS = frozenset(
    {"select", "extend_select", "ignore", "exclude", "extend_exclude", "respect_gitignore",
     "per_file_ignores", "root", "config_path", "cache", "cache_dir", "baseline"}
)
#: Errors that do not follow from the content: finding them again is as cheap as a lookup.
_UNCACHED_ERRORS = frozenset({ErrorKind.NOT_FOUND, ErrorKind.IO, ErrorKind.TOO_LARGE})


def content_digest(data: bytes) -> str:
    """The content part of a key (BLAKE2b: faster than SHA-256 in CPython, and as collision-free
    as anything here needs)."""
    return hashlib.blake2b(data, digest_size=20).hexdigest()


@dataclass(frozen=True)
class CachedResult:
    """What the cache holds for one file."""

    findings: tuple[Finding, ...]
    errors: tuple[FileError, ...]


@dataclass(frozen=True)
class ResultCache:
    """A cache directory plus the fingerprint of this run's rules and settings.

    Picklable (two strings and a path), so pool workers store their own results.
    """

    directory: Path
    #: Hash of version, leaklint's code, enabled rules and result-relevant settings.
    fingerprint: str

    # --- keys ----------------------------------------------------------------------------------
    def key(self, display_path: str, ignored_codes: Sequence[str], digest: str) -> str:
        """The entry key of one file: this run's fingerprint, where the file is reported, the
        per-file-ignores that apply to it, and its content."""
        material = "\0".join((self.fingerprint, display_path, ",".join(ignored_codes), digest))
        return hashlib.blake2b(material.encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / f"v{CACHE_FORMAT}" / key[:2] / f"{key}.json"

    # --- reading -------------------------------------------------------------------------------
    def load(self, key: str, path: str | None = None) -> CachedResult | None:
        """The stored result for ``key``, or None when there is none or it is unusable: not
        readable, not JSON, its checksum wrong, a field of the wrong type, or (given ``path``) a
        finding or error about another file."""
        data = _read_entry(self._entry(key), key)
        if data is None:
            return None
        try:
            if not isinstance(data["findings"], list) or not isinstance(data["errors"], list):
                return None
            result = CachedResult(
                tuple(_finding_from_json(f) for f in data["findings"]),
                tuple(_error_from_json(e) for e in data["errors"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # a field of the wrong type or range (edited or foreign): a miss
        if path is not None and any(item.path != path for item in (*result.findings, *result.errors)):
            return None
        return result

    # --- writing -------------------------------------------------------------------------------
    def store(self, key: str, findings: Iterable[Finding], errors: Iterable[FileError]) -> bool:
        """Write one entry atomically; False (and nothing written) when the entry should not be
        cached or the directory is not writable."""
        errors = tuple(errors)
        if any(error.kind in _UNCACHED_ERRORS for error in errors):
            return False
        return _write_entry(self._entry(key), {
            "key": key,
            "findings": [_to_json(f) for f in findings],
            "errors": [_to_json(e) for e in errors],
        })


@dataclass(frozen=True)
class SummaryCache:
    """What the project pass (leaklint/project.py) learned about one module, kept beside the
    results: a module's summary depends on its bytes, its path, what it is asked about and
    leaklint's own code, not on the rules or settings of a run. Entries are JSON values under
    ``<cache dir>/v2/summaries/``, checksummed and written like results; a value that does not
    read back is a miss."""

    directory: Path
    #: Hash of the format, version and leaklint's code.
    fingerprint: str

    def key(self, *parts: str | bytes) -> str:
        digest = hashlib.blake2b(self.fingerprint.encode(), digest_size=20)
        for part in parts:
            data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogateescape")
            digest.update(len(data).to_bytes(8, "little") + data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / f"v{CACHE_FORMAT}" / "summaries" / key[:2] / f"{key}.json"

    def load(self, key: str) -> Any | None:
        data = _read_entry(self._entry(key), key)
        return None if data is None else data.get("value")

    def store(self, key: str, value: Any) -> bool:
        return _write_entry(self._entry(key), {"key": key, "value": value})


def _read_entry(target: Path, key: str) -> dict[str, Any] | None:
    """The entry at ``target`` when it is whole: JSON, stored under ``key``, its checksum right."""
    try:
        with open(target, "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None  # missing, truncated or garbled: a miss
    if not isinstance(data, dict) or data.get("key") != key or data.get("checksum") != _checksum(data):
        return None
    return data


def _write_entry(target: Path, payload: dict[str, Any]) -> bool:
    """Write ``payload`` with its checksum, atomically; False (nothing written) when the directory
    is not writable."""
    payload = {**payload, "checksum": _checksum(payload)}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, json.dumps(payload, separators=(",", ":")).encode("utf-8"))
    except OSError:
        return False
    return True


def atomic_write(target: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target`` and move it into place: readers see the
    old entry, or none, or the new one, never a part."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


# --- opening the cache for a run ------------------------------------------------------------------
def cache_disabled_by_env() -> bool:
    return os.environ.get(NO_CACHE_ENV, "") not in ("", "0")


def default_cache_dir(settings: Settings) -> Path:
    """``cache-dir`` from the settings (relative to the config file's directory), else
    ``.leaklint_cache`` at the project root (the config file's directory, else the current one)."""
    configured = getattr(settings, "cache_dir", None)
    if configured is not None:
        return Path(os.path.join(settings.root, configured))
    return Path(settings.root) / DEFAULT_CACHE_DIR_NAME


def open_cache(settings: Settings, rules: Sequence[type[Rule]], *, warn: bool = True) -> ResultCache | None:
    """The cache for a run with ``rules`` and ``settings``, or None when caching is off
    (``cache = false``, ``--no-cache``, ``LEAKLINT_NO_CACHE``) or the directory is unusable.

    Creates the directory with a ``.gitignore`` (``*``) and a ``CACHEDIR.TAG`` inside, so neither
    git nor backup tools pick it up. An unusable directory prints one warning (``warn``).
    """
    if not getattr(settings, "cache", True) or cache_disabled_by_env():
        return None
    directory = default_cache_dir(settings)
    try:
        _prepare(directory)
    except OSError as error:
        if warn:
            reason = error.strerror or str(error)
            print(f"leaklint: warning: cache disabled: cannot write {directory}: {reason}", file=sys.stderr)
        return None
    return ResultCache(directory, run_fingerprint(settings, rules))


def open_summary_cache(settings: Settings) -> SummaryCache | None:
    """The summary cache of a run, or None when caching is off or the directory is unusable
    (:func:`open_cache` warns about that once)."""
    if not getattr(settings, "cache", True) or cache_disabled_by_env():
        return None
    directory = default_cache_dir(settings)
    try:
        _prepare(directory)
    except OSError:
        return None
    parts = f"format={CACHE_FORMAT}\nversion={__version__}\npython={sys.version_info[:2]}\ncode={_code_fingerprint(())}"
    return SummaryCache(directory, hashlib.blake2b(parts.encode("utf-8"), digest_size=20).hexdigest())


def _prepare(directory: Path) -> None:
    """Create the cache directory and prove it writable (a probe write, so a read-only directory
    is found once here rather than on every entry)."""
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"# Created by leaklint: the cache is never committed.\n*\n")
        tag = b"Signature: 8a477f597d28d172789f06886806bc55\n# leaklint result cache (https://bford.info/cachedir/)\n"
        atomic_write(directory / "CACHEDIR.TAG", tag)
    (directory / f"v{CACHE_FORMAT}").mkdir(exist_ok=True)
    handle, probe = tempfile.mkstemp(dir=directory / f"v{CACHE_FORMAT}", prefix=".probe-")
    os.close(handle)
    os.unlink(probe)


def run_fingerprint(settings: Settings, rules: Sequence[type[Rule]]) -> str:
    """Hash of what every file's result depends on besides the file itself."""
    parts = [f"format={CACHE_FORMAT}", f"version={__version__}", f"python={sys.version_info[:2]}"]
    parts.append("code=" + _code_fingerprint(rules))
    parts.extend(f"rule={rule.code}:{rule.__module__}.{rule.__qualname__}" for rule in sorted(rules, key=lambda r: r.code))
    for field in dataclasses.fields(settings):
        if field.name not in _RUN_ONLY_SETTINGS:
            parts.append(f"{field.name}={getattr(settings, field.name)!r}")
    return hashlib.blake2b("\n".join(parts).encode("utf-8"), digest_size=20).hexdigest()


def _code_fingerprint(rules: Sequence[type[Rule]]) -> str:
    """Size and mtime of every module of leaklint, its rules and any plug-in rule's module.

    A release changes ``__version__``; an edited checkout (editable install) changes this. It costs
    one ``stat`` per module (~100), far below reading a single cache entry per file.
    """
    own_package = Path(__file__).resolve().parent
    files = set(own_package.rglob("*.py"))
    for rule in rules:
        source = getattr(sys.modules.get(rule.__module__), "__file__", None)
        if not source:
            continue
        if rule.__module__.startswith("leaklint."):
            files.update(Path(source).resolve().parent.rglob("*.py"))  # rules/ may live apart
        else:
            files.add(Path(source).resolve())  # a plug-in: its module only, not site-packages
    stamps = []
    for path in sorted(files):
        try:
            status = path.stat()
        except OSError:
            continue
        stamps.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.blake2b("\n".join(stamps).encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()


# --- JSON ----------------------------------------------------------------------------------------
def _checksum(entry: dict[str, Any]) -> str:
    """BLAKE2b of the entry without its checksum, as :meth:`ResultCache.store` serialises it.

    Computed over the parsed value, so any change to what the entry means shows."""
    body = {name: value for name, value in entry.items() if name != "checksum"}
    return hashlib.blake2b(json.dumps(body, separators=(",", ":")).encode("utf-8"), digest_size=20).hexdigest()


def _to_json(value: Finding | FileError) -> dict[str, Any]:
    return dataclasses.asdict(value)  # enums are str subclasses: json writes their values


class _Untrusted(ValueError):
    """A field of a cache entry without the type or range a result has."""


def _fields(data: object, cls: type) -> dict[str, Any]:
    """``data`` as keyword arguments of dataclass ``cls``: a dict with exactly its fields."""
    if not isinstance(data, dict) or set(data) != {f.name for f in dataclasses.fields(cls)}:
        raise _Untrusted(cls.__name__)
    return data


def _text(value: object) -> str:
    if type(value) is not str:
        raise _Untrusted(repr(value))
    return value


def _number(value: object, minimum: int) -> int:
    """An ``int`` (not a bool, not ``"14"``) of at least ``minimum``."""
    if type(value) is not int or value < minimum:
        raise _Untrusted(repr(value))
    return value


def _cell(value: object) -> int | None:
    """A notebook cell's number, or None outside notebooks."""
    return None if value is None else _number(value, 1)


def _finding_from_json(data: object) -> Finding:
    fields = _fields(data, Finding)
    fix = fields["fix"]
    return Finding(
        path=_text(fields["path"]),
        line=_number(fields["line"], 1),
        column=_number(fields["column"], 1),
        end_line=_number(fields["end_line"], 1),
        end_column=_number(fields["end_column"], 0),
        code=_text(fields["code"]),
        name=_text(fields["name"]),
        severity=Severity(_text(fields["severity"])),
        confidence=Confidence(_text(fields["confidence"])),
        message=_text(fields["message"]),
        help=_text(fields["help"]),
        statement_start=_number(fields["statement_start"], 0),
        statement_end=_number(fields["statement_end"], 0),
        fix=None if fix is None else _fix_from_json(fix),
        cell=_cell(fields["cell"]),
    )


def _fix_from_json(data: object) -> Fix:
    fields = _fields(data, Fix)
    if not isinstance(fields["edits"], list):
        raise _Untrusted("edits")
    return Fix(
        title=_text(fields["title"]),
        applicability=Applicability(_text(fields["applicability"])),
        edits=tuple(_edit_from_json(edit) for edit in fields["edits"]),
    )


def _edit_from_json(data: object) -> TextEdit:
    fields = _fields(data, TextEdit)
    return TextEdit(
        start=_number(fields["start"], 0),
        end=_number(fields["end"], 0),
        replacement=_text(fields["replacement"]),
        line=_number(fields["line"], 1),
        column=_number(fields["column"], 1),
        end_line=_number(fields["end_line"], 1),
        end_column=_number(fields["end_column"], 0),
        cell=_cell(fields["cell"]),
    )


def _error_from_json(data: object) -> FileError:
    fields = _fields(data, FileError)
    rule = fields["rule"]
    return FileError(
        path=_text(fields["path"]),
        kind=ErrorKind(_text(fields["kind"])),
        reason=_text(fields["reason"]),
        rule=None if rule is None else _text(rule),
    )


def user_cache_directory() -> Path:
    """``$XDG_CACHE_HOME/leaklint``, else ``~/.cache/leaklint``: leaklint's own files (not a
    project's results). A relative ``XDG_CACHE_HOME`` is ignored, as the XDG base directory
    specification says."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "leaklint"
