"""File names that are not valid UTF-8, as every report writes them.

A POSIX file name is bytes. Python decodes the bytes that are not UTF-8 as lone surrogates
(``surrogateescape``: ``b"tr\\xffain.py"`` becomes ``"tr\\udcffain.py"``), which no UTF-8 output can
hold: writing one raises ``UnicodeEncodeError``, and JSON's ``"\\udcff"`` escape is rejected by
strict parsers. So, one rule for every format: where text is shown (text, json, github, messages on
stderr) each such byte is written as U+FFFD, the replacement character, as Ruff and most tools do;
where the format can carry bytes (a SARIF URI), the original bytes are percent-encoded, so the link
still names the file.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with every undecodable byte (a lone surrogate) replaced by U+FFFD."""
    if text.isascii():
        return text  # the common case, and no surrogate can hide in ASCII
    return raw_bytes(text).decode("utf-8", "replace")


def raw_bytes(text: str) -> bytes:
    """The bytes a decoded file name stood for: UTF-8, with escaped bytes restored."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate surrogateescape never makes (outside U+DC80-U+DCFF)
        return text.encode("utf-8", "surrogatepass")
