"""Byte sizes as people write them ("4 KiB", "1.5 MB", 4096) and as the reports print them."""

from __future__ import annotations

import re

_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*$")


def parse_size(size: str | int | float) -> float:
    """Bytes in ``size``: a number of bytes, or a string such as ``"4 KiB"`` or ``"2MB"``."""
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        if size < 0:
            raise ValueError(f"a size cannot be negative: {size!r}")
        return float(size)
    match = _SIZE.match(str(size))
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise ValueError(f"not a size: {size!r} (write e.g. 4096, '4 KiB' or '2 MB')")
    return float(match.group(1)) * _UNITS[unit]


def format_bytes(value: float, signed: bool = False) -> str:
    """``value`` in the largest binary unit that keeps it at or above 1 (``448.0 KiB``)."""
    sign = "-" if value < 0 else ("+" if signed and value > 0 else "")
    magnitude = abs(value)
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if magnitude >= scale:
            return f"{sign}{magnitude / scale:.1f} {unit}"
    return f"{sign}{magnitude:.0f} B"
