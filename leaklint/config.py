"""Settings from ``[tool.leaklint]`` (or a ``leaklint.toml``), validated up front.

Every value is checked when the file is read, so a typo fails the run with a message that names the
file and the key instead of silently linting with the wrong rules. Glob matching lives here too, so
the CLI, the engine and the file walker all agree on what ``exclude`` and ``per-file-ignores`` mean.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from leaklint.findings import Applicability, Confidence

if TYPE_CHECKING:
    from leaklint.analysis.project_classes import ProjectClass
    from leaklint.rule import Rule

def normalized_path(path: str) -> str:
    """One spelling of a file's path, whichever way the run was given it."""
    return os.path.normpath(os.path.abspath(path))


DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "__pycache__",
    "build",
    "dist",
    "site-packages",
    "node_modules",
    ".tox",
    ".nox",
    ".eggs",
    ".mypy_cache",
    ".pytest_cache",
    ".leaklint_cache",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of the notebooks beside them
)

#: libcst parses roughly 1 MB/s of dense code here; a bigger .py file is generated data.
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024

#: Dedicated config files, in order of precedence; each beats a pyproject.toml beside it.
DEDICATED_CONFIG_NAMES: tuple[str, ...] = (".leaklint.toml", "leaklint.toml")
PYPROJECT = "pyproject.toml"

_SELECTOR = re.compile(r"^[A-Z]+[0-9]*$")
_SELECTOR_SEPARATORS = re.compile(r"[,\s]+")


class ConfigError(Exception):
    """The configuration is unusable; the message names the file and the key."""


#: Every rule a run knows, code -> name (``leaklint-rules`` plug-ins included). Given to
#: :func:`load_settings` and :meth:`Settings.with_overrides`, it makes a selector that matches no
#: rule an error: ``select = ["LL999"]`` would otherwise check nothing and pass.
RuleNames = Mapping[str, str]


# --------------------------------------------------------------------------------------------------
# Selectors


def parse_selectors(value: str | Sequence[str], *, key: str, rules: RuleNames | None = None) -> tuple[str, ...]:
    """Normalise ``"LL1, LL201"`` or ``["LL1", "LL201"]`` to ``("LL1", "LL201")``.

    Items of a list may themselves hold several selectors (``--select LL1,LL2 --select LL3``).
    Order is kept and duplicates dropped so messages and caches stay stable. With ``rules``, every
    selector must match one of them; errors then suggest a close code (or the code of a rule
    named instead of coded).
    """
    if isinstance(value, str):
        items: Sequence[object] = [value]
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise ConfigError(f"{key}: expected a string or a list of strings, got {_describe(value)}")
    selectors: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(
                f"{key}: expected a string or a list of strings, got {_describe(item)}"
            )
        for part in _SELECTOR_SEPARATORS.split(item.strip()):
            if not part:
                continue
            selector = part.upper()
            if not _SELECTOR.match(selector):
                hint = did_you_mean(part, rules) if rules is not None else ""
                raise ConfigError(
                    f"{key}: invalid selector {part!r}{hint}: expected a rule code such as 'LL101', "
                    "a prefix such as 'LL1', or 'ALL'"
                )
            if rules is not None and not any(matches_selector(code, selector) for code in rules):
                raise ConfigError(
                    f"{key}: unknown rule {part!r}: no rule's code starts with it{did_you_mean(part, rules)}; "
                    "'leaklint rules' lists the rules"
                )
            if selector not in selectors:
                selectors.append(selector)
    return tuple(selectors)


def did_you_mean(text: str, rules: RuleNames) -> str:
    """`` (did you mean 'LL101'?)`` for a close code, or for a rule's name; else nothing."""
    import difflib

    wanted = text.strip()
    names = {name.lower(): code for code, name in rules.items()}
    spelled = wanted.lower().replace("_", "-")
    if spelled in names:
        return f" (did you mean {names[spelled]!r}, the code of {spelled}?)"
    codes = [*rules, "ALL"] if wanted.isalpha() else list(rules)  # 'LL9' is no typo of 'ALL'
    misread = digits_misread(wanted)
    if misread in rules:
        return f" (did you mean {misread!r}?)"
    close = _closest_code(wanted.upper(), codes)
    if close:
        return f" (did you mean {close!r}?)"
    close = difflib.get_close_matches(spelled, list(names), n=1)
    if close:
        return f" (did you mean {names[close[0]]!r}, the code of {close[0]}?)"
    return ""


def digits_misread(text: str) -> str:
    """``text`` upper-cased with the letters typed for digits after the ``LL`` put right: ``LL1O1``
    and ``LL10l`` are ``LL101``."""
    upper = text.strip().upper()
    if not upper.startswith("LL"):
        return upper
    return "LL" + upper[2:].translate(str.maketrans("OLI", "011"))


def _closest_code(text: str, codes: list[str]) -> str | None:
    """The code ``text`` most likely misspells: difflib's best matches, and among codes as
    similar the fewest edits away, then the lowest ('LL1O1' is 'LL101', not 'LL110')."""
    import difflib

    matcher = difflib.SequenceMatcher(a=text)
    scored = []
    for code in codes:
        matcher.set_seq2(code)
        if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and matcher.ratio() >= 0.6:
            scored.append((-round(matcher.ratio(), 6), _edits(text, code), code))
    return min(scored)[2] if scored else None


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (codes are short)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def matches_selector(code: str, selector: str) -> bool:
    """``ALL`` matches every code; any other selector matches codes it is a prefix of."""
    selector = selector.upper()
    return selector == "ALL" or code.upper().startswith(selector)


def _matches_any(code: str, selectors: Sequence[str]) -> bool:
    return any(matches_selector(code, selector) for selector in selectors)


# --------------------------------------------------------------------------------------------------
# Globs


def _clean_pattern(pattern: str) -> str:
    """``./src/gen/`` and ``src/gen`` mean the same thing."""
    pattern = pattern.replace("\\", "/").strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern.rstrip("/") if pattern != "/" else pattern


def _glob_matches(relative: str, pattern: str) -> bool:
    """fnmatch, where ``*`` also crosses ``/`` (so ``**`` works) and ``**/`` may match nothing."""
    candidates = {pattern}
    if pattern.startswith("**/"):
        candidates.add(pattern[3:])
    if pattern.endswith("/**"):
        candidates.add(pattern[:-3])  # "tests/**" also names the directory itself
    return any(fnmatch.fnmatchcase(relative, candidate) for candidate in candidates)


def _path_or_parent_matches(relative: str, pattern: str) -> bool:
    """Whether the path, or one of its parent directories, matches a pattern that holds a ``/``."""
    parts = relative.split("/")
    return any(_glob_matches("/".join(parts[:end]), pattern) for end in range(1, len(parts) + 1))


def _relative_posix(path: str | os.PathLike[str], root: Path) -> str:
    """``path`` (relative to cwd, or absolute) relative to ``root`` in posix form.

    A path outside ``root`` is returned as given (normalised), since no root-relative form exists.
    Discovery asks this of every file it meets, so on POSIX it works on strings (``pathlib`` and a
    ``realpath`` of every component cost 0.17 s on 2,000 files outside the root).
    """
    if os.name != "posix":
        return _relative_posix_pathlib(path, root)
    given = os.fspath(path)
    absolute = os.path.abspath(given)
    root_abs = os.path.abspath(root)
    if absolute.startswith("//") or root_abs.startswith("//"):  # pathlib gives '//' a meaning of its own
        return _relative_posix_pathlib(path, root)
    inside = _lexically_under(absolute, root_abs)
    if inside is None:  # a symlinked root or cwd (macOS /tmp -> /private/tmp)
        inside = _lexically_under(_real_path(absolute), _real_directory(root_abs))
    return inside if inside is not None else Path(given).as_posix()


def _relative_posix_pathlib(path: str | os.PathLike[str], root: Path) -> str:
    given = Path(path)
    absolute = Path(os.path.abspath(given))
    root_abs = Path(os.path.abspath(root))
    try:
        return absolute.relative_to(root_abs).as_posix()
    except ValueError:
        pass
    try:
        return absolute.resolve().relative_to(root_abs.resolve()).as_posix()
    except ValueError:
        return given.as_posix()


def _lexically_under(path: str, root: str) -> str | None:
    """``Path(path).relative_to(root)`` for normalised absolute POSIX paths; None when not under."""
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


@functools.lru_cache(maxsize=4096)
def _real_directory(directory: str) -> str:
    return os.path.realpath(directory)


def forget_real_paths() -> None:
    """Forget the directories' realpaths remembered so far: a symbolic link may have been pointed
    elsewhere since (discovery calls this first, so a long-lived process sees each run afresh)."""
    _real_directory.cache_clear()


def _real_path(absolute: str) -> str:
    """``os.path.realpath`` of a normalised absolute path, with its directory's answer cached: only
    the last component is looked at anew (one ``lstat``, not one per component)."""
    head, tail = os.path.split(absolute)
    if not tail:
        return _real_directory(absolute)
    real = os.path.join(_real_directory(head), tail)
    return os.path.realpath(real) if os.path.islink(real) else real


@functools.lru_cache(maxsize=64)
def _exclusion_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """``is_excluded``'s test for one set of patterns, prepared once: the patterns without ``/``
    become one regular expression, and its answer for each path component is remembered
    (discovery asks about every file, and components repeat)."""
    cleaned = [_clean_pattern(pattern) for pattern in patterns]
    with_slash = [pattern for pattern in cleaned if "/" in pattern]
    components = [pattern for pattern in cleaned if "/" not in pattern]
    any_component = re.compile("|".join(fnmatch.translate(p) for p in components)).match if components else None
    known: dict[str, bool] = {}

    def component_excluded(part: str) -> bool:
        found = known.get(part)
        if found is None:
            found = known[part] = any_component is not None and any_component(part) is not None
        return found

    def excluded(relative: str) -> bool:
        if any(_path_or_parent_matches(relative, pattern) for pattern in with_slash):
            return True
        return any(component_excluded(part) for part in relative.split("/") if part not in ("", "."))

    return excluded


# --------------------------------------------------------------------------------------------------
# Settings


@dataclass(frozen=True)
class Settings:
    """The resolved configuration of one run. Build it with :func:`load_settings`."""

    #: None means "the rules that are on by default".
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    #: Glob patterns; ``exclude`` in a config file replaces these defaults.
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    #: ``(glob, selectors)`` pairs, in file order.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    min_confidence: Confidence = Confidence.MEDIUM
    respect_gitignore: bool = True
    #: Larger files are refused with a clear error (generated data, not training code).
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    #: Rules whose fixes may be applied (``--fix``), and exceptions.
    fixable: tuple[str, ...] = ("ALL",)
    unfixable: tuple[str, ...] = ()
    #: Promote unsafe fixes of these rules to safe, or demote safe ones to unsafe (unsafe wins).
    extend_safe_fixes: tuple[str, ...] = ()
    extend_unsafe_fixes: tuple[str, ...] = ()
    #: The result cache (leaklint/cache.py): off with ``cache = false`` / ``--no-cache``; its
    #: directory, relative to ``root`` (default: ``.leaklint_cache`` there).
    cache: bool = True
    cache_dir: Path | None = None
    #: A baseline file (leaklint/baseline.py), relative to ``root``: only findings not in it are
    #: reported.
    baseline: Path | None = None
    #: The directory globs are relative to: the config file's directory, else cwd.
    root: Path = Path(".")
    config_path: Path | None = None
    #: Not configuration but what the run's files say (leaklint/project.py): the qualified names
    #: of decorators defined in them that turn gradients off. Part of the result-cache key.
    no_grad_decorators: tuple[str, ...] = ()
    #: Likewise: the classes defined in them whose methods keep their arguments (meters, buffers),
    #: summarized (leaklint/analysis/project_classes.py). Part of the result-cache key.
    project_classes: tuple[ProjectClass, ...] = ()
    #: Likewise: (file, function) for top-level functions the other files only call with
    #: gradients disabled (leaklint/project.py). Part of the result-cache key.
    grad_free_functions: tuple[tuple[str, str], ...] = ()

    def grad_free_in(self, path: str) -> frozenset[str]:
        """The functions of the file at ``path`` that :attr:`grad_free_functions` names."""
        if not self.grad_free_functions:
            return frozenset()
        where = normalized_path(path)
        return frozenset(name for file, name in self.grad_free_functions if file == where)

    def enabled_codes(self, rules: Mapping[str, type[Rule]]) -> frozenset[str]:
        """Codes of ``rules`` (code -> class) this configuration turns on.

        A selector that matches no rule selects nothing here; the command refuses one before it
        gets here (``known_rules`` of :func:`load_settings` and :meth:`with_overrides`).
        """
        if self.select is None:
            enabled = {
                code for code, rule in rules.items() if getattr(rule, "default_enabled", True)
            }
        else:
            enabled = {code for code in rules if _matches_any(code, self.select)}
        enabled |= {code for code in rules if _matches_any(code, self.extend_select)}
        return frozenset(code for code in enabled if not _matches_any(code, self.ignore))

    def fix_applicability(self, code: str, applicability: Applicability) -> Applicability | None:
        """How a fix of rule ``code`` may be applied under this configuration (None: not at all)."""
        if not _matches_any(code, self.fixable) or _matches_any(code, self.unfixable):
            return None
        if applicability is Applicability.DISPLAY_ONLY:
            return applicability
        if _matches_any(code, self.extend_unsafe_fixes):
            return Applicability.UNSAFE
        if _matches_any(code, self.extend_safe_fixes):
            return Applicability.SAFE
        return applicability

    def ignored_codes_for(self, path: str | os.PathLike[str]) -> tuple[str, ...]:
        """The per-file-ignores selectors whose glob matches ``path``."""
        if not self.per_file_ignores:
            return ()  # and no path to resolve: a file outside the root costs a realpath()
        relative = _relative_posix(path, self.root)
        basename = PurePosixPath(relative).name
        selectors: list[str] = []
        for pattern, codes in self.per_file_ignores:
            pattern = _clean_pattern(pattern)
            hit = _path_or_parent_matches(relative, pattern)
            if "/" not in pattern:
                hit = hit or _glob_matches(basename, pattern)
            if hit:
                selectors.extend(code for code in codes if code not in selectors)
        return tuple(selectors)

    def is_excluded(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` falls under ``exclude`` or ``extend-exclude``.

        A pattern without ``/`` matches any single component (``build``, ``*.egg-info``); one with
        ``/`` matches the root-relative path or one of its parent directories (``src/gen``).
        """
        return _exclusion_matcher((*self.exclude, *self.extend_exclude))(_relative_posix(path, self.root))

    def with_overrides(self, known_rules: RuleNames | None = None, **changes: Any) -> Settings:
        """A copy with command-line overrides applied, validated like the config file.

        Keys are field names (``extend_select=...``); values may be raw strings or lists as the CLI
        receives them. A bad value raises :class:`ConfigError` naming the option (``--select``),
        and so does a selector that matches none of ``known_rules``, when given.
        """
        fields = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - fields)
        if unknown:
            raise TypeError(f"Settings has no field(s): {', '.join(unknown)}")
        normalised = {}
        for name, value in changes.items():
            if name in ("exclude", "extend_exclude") and isinstance(value, str):
                value = (value,)  # a single pattern from the command line
            normalised[name] = _normalise_field(name, value, key="--" + name.replace("_", "-"), rules=known_rules)
        return dataclasses.replace(self, **normalised)


# --------------------------------------------------------------------------------------------------
# Validation of single values (shared by the file loader and with_overrides)


def _describe(value: object) -> str:
    return f"{type(value).__name__} {value!r}"


def _check_optional_selectors(value: object, key: str, rules: RuleNames | None = None) -> tuple[str, ...] | None:
    return None if value is None else parse_selectors(value, key=key, rules=rules)  # type: ignore[arg-type]


def _check_selectors(value: object, key: str, rules: RuleNames | None = None) -> tuple[str, ...]:
    return parse_selectors(value, key=key, rules=rules)  # type: ignore[arg-type]


def _check_patterns(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{key}: expected a list of glob patterns, got {_describe(value)}")
    for item in value:
        if not isinstance(item, str):
            raise ConfigError(
                f"{key}: expected a list of glob patterns, got item {_describe(item)}"
            )
        if not _clean_pattern(item):
            raise ConfigError(f"{key}: empty glob pattern {item!r}")
    return tuple(value)


def _check_per_file_ignores(value: object, key: str, rules: RuleNames | None = None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in value
    ):
        pairs = [tuple(p) for p in value]
    else:
        raise ConfigError(f"{key}: expected a table of glob = [codes], got {_describe(value)}")
    result = []
    for pattern, codes in pairs:
        if not isinstance(pattern, str) or not _clean_pattern(pattern):
            raise ConfigError(f"{key}: invalid glob pattern {pattern!r}")
        result.append((pattern, parse_selectors(codes, key=f"{key} {pattern!r}", rules=rules)))
    return tuple(result)


def _check_confidence(value: object, key: str) -> Confidence:
    if isinstance(value, Confidence):
        return value
    choices = ", ".join(c.value for c in Confidence)
    if isinstance(value, str):
        try:
            return Confidence(value.strip().lower())
        except ValueError:
            pass
    raise ConfigError(f"{key}: expected one of {choices}, got {value!r}")


def _check_bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key}: expected true or false, got {_describe(value)}")
    return value


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|KIB|MB|MIB|GB|GIB)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"B": 1, "KB": 1000, "KIB": 1024, "MB": 1000**2, "MIB": 1024**2, "GB": 1000**3, "GIB": 1024**3}


def _check_size(value: object, key: str) -> int:
    """A byte count: ``2097152``, ``"2 MiB"``, ``"500KB"``."""
    if isinstance(value, bool):
        raise ConfigError(f"{key}: expected a size such as 2097152 or \"2 MiB\", got {_describe(value)}")
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, str):
        match = _SIZE.match(value)
        if match:
            size = int(float(match.group(1)) * _SIZE_UNITS[(match.group(2) or "B").upper()])
            if size > 0:
                return size
    raise ConfigError(f"{key}: expected a positive size such as 2097152 or \"2 MiB\", got {value!r}")


def _check_path(value: object, key: str) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise ConfigError(f"{key}: expected a path, got {_describe(value)}")
    return Path(value)


def _check_optional_path(value: object, key: str) -> Path | None:
    return None if value is None else _check_path(value, key)


_FIELD_CHECKERS: dict[str, Callable[[object, str], Any]] = {
    "select": _check_optional_selectors,
    "extend_select": _check_selectors,
    "ignore": _check_selectors,
    "exclude": _check_patterns,
    "extend_exclude": _check_patterns,
    "per_file_ignores": _check_per_file_ignores,
    "min_confidence": _check_confidence,
    "respect_gitignore": _check_bool,
    "max_file_size": _check_size,
    "fixable": _check_selectors,
    "unfixable": _check_selectors,
    "extend_safe_fixes": _check_selectors,
    "extend_unsafe_fixes": _check_selectors,
    "cache": _check_bool,
    "cache_dir": _check_optional_path,
    "baseline": _check_optional_path,
    "root": _check_path,
    "config_path": _check_optional_path,
}

#: The keys a config file may set (kebab-case), mapped to Settings fields.
CONFIG_KEYS: dict[str, str] = {
    name.replace("_", "-"): name for name in _FIELD_CHECKERS if name not in ("root", "config_path")
}


#: The fields that hold rule selectors: checked against the known rules when those are given.
_SELECTOR_FIELDS = frozenset(
    {"select", "extend_select", "ignore", "per_file_ignores", "fixable", "unfixable", "extend_safe_fixes", "extend_unsafe_fixes"}
)


def _normalise_field(name: str, value: object, *, key: str, rules: RuleNames | None = None) -> Any:
    if name in _SELECTOR_FIELDS:
        return _FIELD_CHECKERS[name](value, key, rules)  # type: ignore[call-arg]
    return _FIELD_CHECKERS[name](value, key)


# --------------------------------------------------------------------------------------------------
# Finding and reading the file


def _display(path: Path, cwd: Path) -> str:
    """A short name for messages: relative to cwd when the file is below it."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def _read_toml(path: Path, display: str) -> dict[str, Any]:
    # Imported here: a run without a configuration file reads no TOML.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised only on 3.10
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{display}: cannot read config file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{display}: invalid TOML: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{display}: invalid TOML: {exc}") from None


def _leaklint_table(data: Mapping[str, Any], display: str) -> dict[str, Any] | None:
    """The ``[tool.leaklint]`` table, or None when the file has none."""
    tool = data.get("tool")
    if tool is not None and not isinstance(tool, Mapping):
        raise ConfigError(f"{display}: 'tool' must be a table, got {_describe(tool)}")
    if tool is None or "leaklint" not in tool:
        return None
    table = tool["leaklint"]
    if not isinstance(table, Mapping):
        raise ConfigError(f"{display}: [tool.leaklint] must be a table, got {_describe(table)}")
    return dict(table)


def _misplaced_table(data: Mapping[str, Any]) -> str | None:
    """The dotted name of a table meant for leaklint but not read as ``[tool.leaklint]``:
    ``[leaklint]``, ``[tools.leaklint]``, ``[tool.leak-lint]``, ``[tool.LeakLint]``..."""

    def meant(name: object) -> bool:
        return isinstance(name, str) and re.sub(r"[-_. ]", "", name.lower()) == "leaklint"

    for key, value in data.items():
        if meant(key):
            return str(key)
        if isinstance(value, Mapping):
            for inner in value:
                if meant(inner) and not (key == "tool" and inner == "leaklint"):
                    return f"{key}.{inner}"
    return None


def _pyproject_has_table(path: Path, display: str) -> bool:
    """Whether a pyproject.toml configures leaklint.

    Every pyproject.toml the search meets is parsed, as Ruff does: a broken one is an error, and
    so is leaklint's table under another name (``[tools.leaklint]``). Skipping either would lint
    with the defaults without a word, whatever the file meant to configure.
    """
    data = _read_toml(path, display)
    table = _leaklint_table(data, display)
    if table is None:
        _refuse_misplaced_table(data, display)
    return table is not None


def _refuse_misplaced_table(data: Mapping[str, Any], display: str) -> None:
    misplaced = _misplaced_table(data)
    if misplaced is not None:
        raise ConfigError(f"{display}: [{misplaced}] is not read: leaklint's settings go in [tool.leaklint]")


def find_config_file(start: Path) -> Path | None:
    """The nearest config file at or above ``start`` (a directory or a file in one).

    In each directory ``.leaklint.toml`` and ``leaklint.toml`` come first; a ``pyproject.toml``
    counts only when it has a ``[tool.leaklint]`` table, otherwise the search goes on upward.
    """
    directory = Path(os.path.abspath(start))
    if directory.is_file():
        directory = directory.parent
    for candidate_dir in (directory, *directory.parents):
        for name in DEDICATED_CONFIG_NAMES:
            if (candidate_dir / name).is_file():
                return candidate_dir / name
        pyproject = candidate_dir / PYPROJECT
        if pyproject.is_file() and _pyproject_has_table(pyproject, _display(pyproject, directory)):
            return pyproject
    return None


def _field_for_key(key: object, where: str) -> str:
    """Map a TOML key to a Settings field, or explain which keys exist."""
    if isinstance(key, str) and key in CONFIG_KEYS:
        return CONFIG_KEYS[key]
    import difflib

    valid = sorted(CONFIG_KEYS)
    close = difflib.get_close_matches(str(key), valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(f"{where}unknown key {key!r}{hint}; valid keys: {', '.join(valid)}")


def _settings_from_table(table: Mapping[str, Any], *, where: str, config_path: Path, rules: RuleNames | None) -> Settings:
    changes = {}
    for key, value in table.items():
        name = _field_for_key(key, where)
        changes[name] = _normalise_field(name, value, key=f"{where}{key}", rules=rules)
    return Settings(root=config_path.parent, config_path=config_path, **changes)


def load_settings(config_file: Path | None = None, *, cwd: Path | None = None, known_rules: RuleNames | None = None) -> Settings:
    """Read the settings for a run.

    ``config_file`` (``--config``) must exist. A file with ``[tool.leaklint]`` uses that table; a
    ``pyproject.toml`` without one gives defaults rooted at its directory; any other TOML file is
    read by its top-level keys. Without ``config_file`` the nearest config above ``cwd`` is used,
    and with none at all the defaults, rooted at ``cwd``. With ``known_rules``, a selector that
    matches none of them is an error.
    """
    cwd = Path(os.path.abspath(cwd if cwd is not None else Path.cwd()))
    if config_file is None:
        config_file = find_config_file(cwd)
        if config_file is None:
            return Settings(root=cwd)
    path = Path(os.path.abspath(cwd / config_file))
    display = _display(path, cwd)
    if not path.exists():
        raise ConfigError(f"{display}: config file not found")
    if not path.is_file():
        raise ConfigError(f"{display}: config file is not a file")
    data = _read_toml(path, display)
    table = _leaklint_table(data, display)
    if table is not None:
        return _settings_from_table(table, where=f"{display}: [tool.leaklint] ", config_path=path, rules=known_rules)
    if path.name == PYPROJECT:
        _refuse_misplaced_table(data, display)
        return Settings(root=path.parent, config_path=path)
    return _settings_from_table(data, where=f"{display}: ", config_path=path, rules=known_rules)
