"""Unusual but real inputs: each is linted at the right place, or refused with one clear line and
exit status 2 — never a traceback. And the crashes found by bench/crashfree.py and the fuzzers stay
fixed (regression tests at the bottom)."""

from __future__ import annotations

import pytest

from conftest import LEAKY_LOOP, run_leaklint, text
from leaklint.config import Settings
from leaklint.engine import lint_file, lint_text
from leaklint.findings import ErrorKind
from leaklint.registry import all_rules

RULES = list(all_rules().values())
LEAK_LINE = 10  # where LEAKY_LOOP accumulates its loss
SUPPRESSIBLE = LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss  # noqa: LL101\n        total_loss += loss")

#: name -> (bytes, expected (line, column) of the LL101 finding)
LINTED = {
    "cr_only.py": (LEAKY_LOOP.replace("\n", "\r").encode(), (LEAK_LINE, 9)),
    "crlf.py": (LEAKY_LOOP.replace("\n", "\r\n").encode(), (LEAK_LINE, 9)),
    "form_feeds.py": (("\f\n" + LEAKY_LOOP.replace("def train", "\f\n\f   \ndef train")).encode(), (LEAK_LINE + 3, 9)),
    "tabs.py": (LEAKY_LOOP.replace("    ", "\t").encode(), (LEAK_LINE, 3)),
    "latin1.py": (b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + LEAKY_LOOP.encode(), (LEAK_LINE + 2, 9)),
    "cp1252.py": (b"# vim: set fileencoding=cp1252 :\n# \x80 \x93quoted\x94\n" + LEAKY_LOOP.encode(), (LEAK_LINE + 2, 9)),
    "utf8_bom_cookie.py": (b"\xef\xbb\xbf# coding: utf-8\n" + LEAKY_LOOP.encode(), (LEAK_LINE + 1, 9)),
    "long_string.py": ((LEAKY_LOOP + "BLOB = '" + "a" * 1_000_000 + "'\n").encode(), (LEAK_LINE, 9)),
    "long_line.py": ((LEAKY_LOOP + "TABLE = [" + "1, " * 5_000 + "]\n").encode(), (LEAK_LINE, 9)),
}

#: name -> (bytes, error kind, words the one stderr line must hold)
REFUSED = {
    "utf16_bom.py": (("# coding: utf-16\n" + LEAKY_LOOP).encode("utf-16"), ErrorKind.DECODE, "UTF-16/UTF-32 encoded"),
    "utf32_bom.py": (LEAKY_LOOP.encode("utf-32"), ErrorKind.DECODE, "UTF-16/UTF-32 encoded"),
    "bom_latin1_cookie.py": (b"\xef\xbb\xbf# coding: latin-1\n" + LEAKY_LOOP.encode(), ErrorKind.DECODE, "byte-order mark with a coding cookie"),
    "unknown_cookie.py": (b"# coding: klingon\n" + LEAKY_LOOP.encode(), ErrorKind.DECODE, "unknown encoding: klingon"),
    "cookie_lies.py": (b"# coding: utf-8\nx = 'caf\xe9'\n", ErrorKind.DECODE, "cannot decode as utf-8"),
    "mixed_tabs.py": (LEAKY_LOOP.replace("        total_loss += loss", "\ttotal_loss += loss").encode(), ErrorKind.SYNTAX, "inconsistent use of tabs"),
    "ten_megabytes.py": ((LEAKY_LOOP + "DATA = [\n" + "    0.1234567,\n" * 760_000 + "]\n").encode(), ErrorKind.TOO_LARGE, "above max-file-size"),
    # (Only a file that a rule needs meets libcst: see tests/engine/test_gate.py.)
    "paren_annotation.py": ((LEAKY_LOOP + "(x): int = 1\n").encode(), ErrorKind.UNSUPPORTED, "valid Python that libcst cannot parse"),
}


@pytest.fixture(scope="module")
def edge_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("edge")
    (root / "pyproject.toml").write_text("[tool.leaklint]\n")
    for name, (data, *_) in {**LINTED, **REFUSED}.items():
        (root / name).write_bytes(data)
    return root


@pytest.mark.parametrize("name", LINTED)
def test_unusual_files_are_linted_at_the_right_place(edge_project, name):
    outcome = lint_file(str(edge_project / name), RULES, Settings())
    assert outcome.errors == []
    assert [(f.line, f.column, f.code) for f in outcome.findings] == [(*LINTED[name][1], "LL101")]


@pytest.mark.parametrize("name", REFUSED)
def test_unusable_files_are_refused_with_a_reason(edge_project, name):
    _, kind, words = REFUSED[name]
    outcome = lint_file(str(edge_project / name), RULES, Settings())
    assert outcome.findings == []
    assert [e.kind for e in outcome.errors] == [kind]
    assert words in outcome.errors[0].reason


def test_the_command_line_reports_each_refusal_on_one_line(edge_project):
    """One run over every edge file: findings for the good ones, one stderr line per refused one,
    exit status 2, no traceback."""
    result = run_leaklint("--no-cache", *sorted(LINTED), *sorted(REFUSED), cwd=edge_project)
    out, err = text(result)
    assert result.returncode == 2
    assert "Traceback" not in err and "Traceback" not in out
    assert sorted(line.split(":", 1)[0] for line in err.splitlines()) == sorted(REFUSED)
    assert {line.split(":", 1)[0] for line in out.splitlines() if ": LL101 " in line} == set(LINTED)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_noqa_works_with_every_line_ending(newline):
    source = SUPPRESSIBLE.replace("\n", newline)
    outcome = lint_text(source, "train.py", RULES, Settings())
    assert [(f.line, f.code) for f in outcome.findings] == [(LEAK_LINE + 1, "LL101")]


def test_noqa_after_form_feeds():
    source = SUPPRESSIBLE.replace("def train", "\f\n\f# separators str.splitlines() splits at: \x0b \x1c \x85 \u2028\ndef train")
    outcome = lint_text(source, "train.py", RULES, Settings())
    assert [(f.line, f.code) for f in outcome.findings] == [(LEAK_LINE + 3, "LL101")]


# --- regressions: crashes found on real code --------------------------------------------------
def test_ll105_del_of_several_targets():
    """peft 0.21.2 tuners/shadow/model.py: ``del a[k], b`` in a class with a hook crashed LL105."""
    source = """\
import torch

class Recorder:
    def __init__(self, model):
        self.features = {}
        model.layer.register_forward_hook(self.hook)

    def hook(self, module, inputs, output):
        self.features[module] = output

    def reset(self, module):
        del self.features[module], module.cache
"""
    assert lint_text(source, "recorder.py", RULES, Settings()).errors == []


@pytest.mark.parametrize("index", ["0xFFFFFFF", "0o17", "0b1", "1_000", "00"])
def test_subscript_with_any_integer_literal(index):
    """CPython's test_mmap.py: ``m[0xFFFFFFF]`` crashed the provenance analysis (int('0x...'))."""
    source = f"import torch\nfor x in loader:\n    out = model(x)\n    v = out[{index}]\n"
    assert lint_text(source, "m.py", RULES, Settings()).errors == []
