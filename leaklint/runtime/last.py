"""The last measured result of every rule, kept by ``leaklint verify`` for ``leaklint rule``.

``leaklint verify`` writes each rule it measured (both variants ran) into one JSON document in the
user's cache directory, ``$XDG_CACHE_HOME/leaklint/verify.json`` (``~/.cache/leaklint/verify.json``
when ``XDG_CACHE_HOME`` is unset), replacing that rule's previous entry and keeping the others. The
write is atomic (a temporary file in the same directory, then ``os.replace``), so a reader never
sees half a document. ``leaklint rule CODE`` shows the entry: when, on which device and torch, the
numbers of both variants and the verdict; without one it says how to produce it.

Document: ``{"schema": "leaklint.verify-last/1", "rules": {CODE: entry}}``; an entry has ``date``
(UTC, ISO 8601), ``device``, ``torch``, ``leaklint``, ``iterations``, ``warmup`` and ``result`` (the
rule's object of ``leaklint verify --format json``). Importing this module never imports torch.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from leaklint.cache import atomic_write
from leaklint.cache import user_cache_directory

SCHEMA = "leaklint.verify-last/1"


def store_path() -> Path:
    """``verify.json`` in the user's cache directory (:func:`~leaklint.cache.user_cache_directory`)."""
    return user_cache_directory() / "verify.json"


def load_all(path: Path | None = None) -> dict[str, Any]:
    """Every stored entry by rule code; nothing (not an error) when the file is missing or unreadable."""
    try:
        document = json.loads((path or store_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or document.get("schema") != SCHEMA or not isinstance(document.get("rules"), dict):
        return {}
    return document["rules"]


def load(code: str, path: Path | None = None) -> dict[str, Any] | None:
    entry = load_all(path).get(code)
    return entry if isinstance(entry, dict) and isinstance(entry.get("result"), dict) else None


def save(
    results: Iterable[Mapping[str, Any]],
    *,
    device: str,
    torch_version: str,
    iterations: int,
    warmup: int,
    path: Path | None = None,
    now: datetime | None = None,
) -> Path:
    """Store ``results`` (result objects of the JSON report) whose variants both ran; raises OSError."""
    from leaklint import __version__

    target = path or store_path()
    rules = load_all(target)
    date = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="seconds")
    for result in results:
        if result.get("leaky") is None or result.get("fixed") is None:
            continue  # skipped or failed: nothing was measured, keep the last measurement
        rules[result["code"]] = {
            "date": date,
            "device": device if result.get("device") in (None, "-") else result["device"],
            "torch": torch_version,
            "leaklint": __version__,
            "iterations": iterations,
            "warmup": warmup,
            "result": dict(result),
        }
    document = {"schema": SCHEMA, "rules": dict(sorted(rules.items()))}
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(document, indent=1) + "\n").encode("utf-8"))
    return target


def _bytes(value: Any) -> str:
    from leaklint.runtime.units import format_bytes

    return "-" if value is None else format_bytes(value)


def render(code: str, path: Path | None = None) -> str:
    """The ``## Last measured`` section of a rule page."""
    target = path or store_path()
    entry = load(code, target)
    if entry is None:
        return (
            f"\n## Last measured\nNo measurement stored yet. Run `leaklint verify {code}`: it measures both "
            f"variants and keeps the result in {target} for this page.\n"
        )
    result = entry["result"]
    leaky, fixed = result.get("leaky") or {}, result.get("fixed") or {}
    host_meter = result.get("host_meter")
    rows = []
    if leaky.get("live"):
        rows += [
            ("tensor bytes gained per iteration", "growth_per_iteration", _bytes),
            ("peak tensor bytes within an iteration", "peak", _bytes),
            ("tensor bytes held at the end", "held", _bytes),
        ]
    if host_meter:
        rows.append((f"host memory ({host_meter}) gained per iteration", "host_growth_per_iteration", _bytes))
        if not leaky.get("live") and leaky.get("host_held") is not None:
            rows.append((f"host memory ({host_meter}) held at the end", "host_held", _bytes))
    rows.append(("time per iteration", "seconds_per_iteration", lambda s: "-" if s is None else f"{s * 1e3:.2f} ms"))
    table = ["| measured | leaky | fixed |", "| --- | --- | --- |"]
    table += [f"| {label} | {show(leaky.get(key))} | {show(fixed.get(key))} |" for label, key, show in rows]
    date = entry.get("date", "?").replace("T", " ").replace("+00:00", " UTC")
    status = result.get("status", "?")
    verdict = result.get("verdict", "?")
    outcome = f"{verdict} (the rule claims {result.get('severity', '?')}: {status})"
    if status != "confirmed" and result.get("reason"):
        outcome += f"; {result['reason']}"
    return (
        f"\n## Last measured\n`leaklint verify {code}` on {date}, device {entry.get('device', '?')}, "
        f"torch {entry.get('torch', '?')}, leaklint {entry.get('leaklint', '?')}, {entry.get('iterations', '?')} "
        f"iterations after {entry.get('warmup', '?')} warm-up (stored in {target}):\n\n"
        + "\n".join(table)
        + f"\n\nVerdict: {outcome}.\n"
    )
