"""The leak benchmark's cases: where they live, what their headers say, which lines they mark.

score.py scores leaklint against these files; this module only reads them, checks that they follow
bench/leaks/README.md ("Case format") and says what is wrong with the ones that do not, so that a
malformed case is reported instead of silently counting as a miss or a false positive.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

STYLES = (
    "plain",
    "lightning",
    "hf-trainer",
    "accelerate",
    "rl",
    "gan",
    "diffusion",
    "seq2seq",
    "keras-fit",
    "keras-callback",
    "tf1-session",
    "tf2-loop",
)

# `# leak: LL101` or `# leak: new:metric-never-reset` at the end of a line.
MARKER = re.compile(r"#\s*leak:\s*(?P<code>\S+)\s*$")
EXPECTED_CODE = re.compile(r"^(LL\d{3}|new:[a-z0-9]+(?:-[a-z0-9]+)*)$")
# Anything that looks like an attempt at a marker, to catch typos such as `# leak LL101`.
MARKER_LIKE = re.compile(r"#\s*leak\b", re.IGNORECASE)
HEADER_FIELDS = ("Source", "Style", "Kind")


@dataclass(frozen=True)
class Marker:
    """A line the case says leaks, and the rule (or future rule family) meant to find it."""

    line: int
    code: str
    source: str


@dataclass
class CaseFile:
    """One benchmark file: a case's buggy or fixed version, or a near-miss negative."""

    path: Path
    case: str
    role: str  # "buggy", "fixed" or "negative"
    title: str = ""
    sources: list[str] = field(default_factory=list)
    style: str = ""
    kind: str = ""
    markers: list[Marker] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def source_line(self, line: int) -> str:
        """The text of a 1-based line, stripped, or '' past the end."""
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


def discover(root: Path) -> list[Path]:
    """Every benchmark file under root, in a stable order: cases/*/{buggy,fixed}.py, negatives/*.py."""
    files = sorted((root / "cases").glob("*/buggy.py")) + sorted((root / "cases").glob("*/fixed.py"))
    files += sorted((root / "negatives").glob("*.py"))
    return sorted(set(files))


def role_of(path: Path) -> tuple[str, str]:
    """(case name, role) from where a file lives."""
    if path.parent.name == "negatives":
        return path.stem, "negative"
    return path.parent.name, path.stem


def load(path: Path) -> tuple[CaseFile, list[str]]:
    """Read one benchmark file; the second item lists what is wrong with it (empty when nothing)."""
    case, role = role_of(path)
    item = CaseFile(path=path, case=case, role=role)
    problems: list[str] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return item, [f"cannot be read: {error}"]
    item.lines = text.splitlines()
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        return item, [f"does not parse: {error.msg} (line {error.lineno})"]
    problems += _read_header(item, ast.get_docstring(tree, clean=True))
    problems += _read_markers(item)
    problems += _check_role(item)
    return item, problems


def _read_header(item: CaseFile, docstring: str | None) -> list[str]:
    if not docstring:
        return ["no module docstring: the header (title, Source:, Style:, Kind:) is missing"]
    lines = docstring.splitlines()
    item.title = lines[0].strip()
    problems = [] if item.title else ["the docstring's first line (the title) is empty"]
    values: dict[str, list[str]] = {name: [] for name in HEADER_FIELDS}
    for raw in lines[1:]:
        name, sep, value = raw.strip().partition(":")
        if sep and name in values and value.strip():
            values[name].append(value.strip())
    for name in HEADER_FIELDS:
        if not values[name]:
            problems.append(f"the header has no '{name}:' line")
    item.sources = values["Source"]
    item.style = values["Style"][0] if values["Style"] else ""
    item.kind = values["Kind"][0] if values["Kind"] else ""
    for url in item.sources:
        if not url.startswith(("http://", "https://")):
            problems.append(f"Source is not a URL: {url!r}")
    if item.style and item.style not in STYLES:
        problems.append(f"unknown Style {item.style!r} (one of: {', '.join(STYLES)})")
    return problems


def _read_markers(item: CaseFile) -> list[str]:
    problems = []
    for number, text in enumerate(item.lines, start=1):
        if not MARKER_LIKE.search(text):
            continue
        match = MARKER.search(text)
        if match is None or not EXPECTED_CODE.match(match.group("code")):
            problems.append(f"line {number}: malformed leak marker {text.strip()!r} (write '# leak: LL101' or '# leak: new:<family>')")
            continue
        item.markers.append(Marker(line=number, code=match.group("code"), source=text.strip()))
    return problems


def _check_role(item: CaseFile) -> list[str]:
    if item.role == "buggy" and not item.markers:
        return ["a buggy version without any '# leak:' marker"]
    if item.role in ("fixed", "negative") and item.markers:
        lines = ", ".join(str(marker.line) for marker in item.markers)
        return [f"a {item.role} file must not carry leak markers (line {lines})"]
    if item.role == "negative" and item.kind and not item.kind.startswith("negative:"):
        return ["a negative's Kind must start with 'negative:'"]
    if item.role not in ("buggy", "fixed", "negative"):
        return [f"unexpected file {item.path.name!r} in a case folder (only buggy.py and fixed.py)"]
    return []


def load_all(root: Path) -> tuple[list[CaseFile], list[str]]:
    """Every benchmark file under root, and every problem found, each naming its file."""
    items: list[CaseFile] = []
    problems: list[str] = []
    for path in discover(root):
        item, issues = load(path)
        items.append(item)
        problems += [f"{path}: {issue}" for issue in issues]
    for case_dir in sorted(p for p in (root / "cases").glob("*") if p.is_dir()):
        if not any(case_dir.glob("*.py")):
            continue  # nothing but leftovers (a __pycache__ of a removed case)
        if not (case_dir / "buggy.py").is_file():
            problems.append(f"{case_dir}: a case folder without buggy.py")
        stray = sorted(p.name for p in case_dir.glob("*.py") if p.name not in ("buggy.py", "fixed.py"))
        if stray:
            problems.append(f"{case_dir}: unexpected files {', '.join(stray)} (only buggy.py and fixed.py)")
    by_case: dict[str, list[CaseFile]] = {}
    for item in items:
        if item.role != "negative":
            by_case.setdefault(item.case, []).append(item)
    for case, versions in by_case.items():
        styles = {version.style for version in versions}
        if len(styles) > 1:
            problems.append(f"{case}: buggy.py and fixed.py name different styles ({', '.join(sorted(styles))})")
    return items, problems
