"""The server extra stays optional, and the server's pure parts (positions, noqa edits) hold.

None of these tests needs pygls: ``leaklint server`` without it must say how to install it, and the
other commands must never import it (``leaklint --version`` starts as fast with the extra as without).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from leaklint.fixes.noqa import suppression_edit
from leaklint.server.positions import UTF8, UTF16, UTF32, LineIndex

WITHOUT_PYGLS = """
import sys
sys.modules["pygls"] = None  # as if the extra were not installed: importing it fails
from leaklint.cli import run
run(["server"])
"""

IMPORTED_BY = """
import json, sys
from leaklint.cli import run
try:
    run(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def test_without_the_extra_the_server_says_how_to_install_it() -> None:
    done = subprocess.run([sys.executable, "-c", WITHOUT_PYGLS], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == ["leaklint: error: 'leaklint server' needs the server extra: pip install 'leaklint-ml[server]'"]


@pytest.mark.parametrize("arguments", [["--version"], ["rules"]])
def test_other_commands_never_import_the_server(arguments: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", IMPORTED_BY, *arguments], capture_output=True, text=True, timeout=60)
    imported = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert not {name for name in imported if name.split(".")[0] in ("pygls", "lsprotocol", "cattrs")}
    assert not {name for name in imported if name.startswith("leaklint.server")}


# --- positions ------------------------------------------------------------------------------------
def test_columns_count_utf16_units_beyond_the_basic_plane() -> None:
    text = "x = '😋'  # é\ny\n"
    index = LineIndex(text, UTF16)
    after_emoji = text.index("'", 5)
    assert index.position(after_emoji) == (0, 7)  # the emoji is two UTF-16 units
    assert LineIndex(text, UTF32).position(after_emoji) == (0, 6)
    assert LineIndex(text, UTF8).position(after_emoji) == (0, 9)
    assert index.position(text.index("y")) == (1, 0)


def test_lines_split_as_lsp_splits_them() -> None:
    text = "a = 1\x0c\nb = 2\r\nc = 3\rd"  # a form feed is no line break; \r\n and \r are
    index = LineIndex(text)
    assert index.position(text.index("b")) == (1, 0)
    assert index.position(text.index("c")) == (2, 0)
    assert index.position(text.index("d")) == (3, 0)
    assert index.offset(2, 1) == text.index("b") and index.offset(2, 99) == text.index("\r\n")


# --- suppression comments -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("total += loss", "total += loss  # noqa: LL101"),
        ("total += loss   ", "total += loss  # noqa: LL101"),
        ("total += loss  # noqa: E501", "total += loss  # noqa: E501, LL101"),
        ("total += loss  # NOQA:E501,W291 why", "total += loss  # NOQA:E501,W291, LL101 why"),
        ("total += loss  # noqa:", "total += loss  # noqa: LL101"),
        ("total += loss  # type: ignore", "total += loss  # type: ignore  # noqa: LL101"),
    ],
)
def test_the_noqa_comment_is_added_or_merged(line: str, expected: str) -> None:
    text = f"for x in data:\n    {line}\n"
    edit = suppression_edit(text, "LL101", [2])
    assert edit is not None and edit.apply(text) == f"for x in data:\n    {expected}\n"


def test_a_line_inside_a_string_is_skipped_for_the_statements_last_line() -> None:
    text = 'log(f"""\n{loss}\n""", total)\n'
    edit = suppression_edit(text, "LL101", [2, 3, 1])
    assert edit is not None and edit.line == 3
    assert edit.apply(text) == 'log(f"""\n{loss}\n""", total)  # noqa: LL101\n'


def test_line_endings_are_kept() -> None:
    text = "a = 1\r\nb = 2\r\n"
    edit = suppression_edit(text, "LL101", [2])
    assert edit is not None and edit.apply(text) == "a = 1\r\nb = 2  # noqa: LL101\r\n"
