"""Inline suppression comments: which syntaxes count, and what each one silences."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from leaklint.suppressions import ALL_CODES, is_suppressed, suppression_table


def table_for(source: str) -> dict[int, frozenset[str]]:
    return suppression_table(textwrap.dedent(source))


def suppressed_on_line_1(comment: str, code: str) -> bool:
    table = suppression_table(f"x = 1  {comment}\n")
    return is_suppressed(code, [1], table)


# --- noqa ----------------------------------------------------------------------------------------


def test_bare_noqa_suppresses_every_code() -> None:
    assert suppression_table("x = 1  # noqa\n") == {1: ALL_CODES}
    assert suppressed_on_line_1("# noqa", "LL101")
    assert suppressed_on_line_1("# noqa", "LL999")


def test_noqa_with_one_code_suppresses_only_that_code() -> None:
    assert suppression_table("x = 1  # noqa: LL101\n") == {1: frozenset({"LL101"})}
    assert suppressed_on_line_1("# noqa: LL101", "LL101")
    assert not suppressed_on_line_1("# noqa: LL101", "LL102")


def test_noqa_codes_may_be_separated_by_commas() -> None:
    assert table_for("x = 1  # noqa: LL101, LL102\n") == {1: frozenset({"LL101", "LL102"})}


def test_noqa_codes_may_be_separated_by_spaces_without_a_space_after_the_colon() -> None:
    assert table_for("x = 1  # noqa:LL101 LL102\n") == {1: frozenset({"LL101", "LL102"})}


def test_noqa_keyword_and_codes_are_case_insensitive() -> None:
    assert table_for("x = 1  # NoQA: ll101\n") == {1: frozenset({"LL101"})}
    assert table_for("x = 1  #NOQA\n") == {1: ALL_CODES}


def test_a_foreign_noqa_code_never_suppresses_leaklint_codes() -> None:
    assert table_for("x = 1  # noqa:E501\n") == {1: frozenset({"E501"})}
    assert not suppressed_on_line_1("# noqa:E501", "LL101")


def test_foreign_and_leaklint_codes_can_share_one_noqa() -> None:
    assert suppressed_on_line_1("# noqa: E501, LL101", "LL101")
    assert not suppressed_on_line_1("# noqa: E501, LL101", "LL102")


def test_prose_after_the_code_list_is_not_read_as_codes() -> None:
    assert table_for("x = 1  # noqa: LL101 because the buffer is tiny\n") == {
        1: frozenset({"LL101"})
    }


def test_noqa_with_a_colon_but_no_valid_code_suppresses_nothing() -> None:
    # Like Ruff: a malformed directive must not turn into a blanket one.
    assert table_for("x = 1  # noqa: because\n") == {}
    assert table_for("x = 1  # noqa:LL1x\n") == {}


def test_a_word_that_merely_starts_with_noqa_is_not_a_directive() -> None:
    assert table_for("x = 1  # noqanything\n") == {}


def test_a_noqa_prefix_suppresses_every_code_it_starts() -> None:
    assert suppressed_on_line_1("# noqa: LL1", "LL101")
    assert suppressed_on_line_1("# noqa: LL1", "LL199")
    assert not suppressed_on_line_1("# noqa: LL1", "LL201")


# --- leaklint: ignore ----------------------------------------------------------------------------


def test_bare_leaklint_ignore_suppresses_every_code() -> None:
    assert table_for("x = 1  # leaklint: ignore\n") == {1: ALL_CODES}


def test_leaklint_ignore_with_codes_suppresses_those_codes() -> None:
    assert table_for("x = 1  # leaklint: ignore[LL101,LL102]\n") == {
        1: frozenset({"LL101", "LL102"})
    }


def test_leaklint_ignore_accepts_spaces_lowercase_and_prefixes() -> None:
    assert table_for("x = 1  # LeakLint: Ignore[ll1, LL201]\n") == {1: frozenset({"LL1", "LL201"})}
    assert suppressed_on_line_1("# leaklint: ignore[LL1]", "LL104")


def test_leaklint_ignore_all_selector_suppresses_every_code() -> None:
    assert suppressed_on_line_1("# leaklint: ignore[ALL]", "LL401")


# --- where the comment is ------------------------------------------------------------------------


def test_a_directive_after_other_comment_text_counts() -> None:
    assert table_for("x = f()  # type: ignore  # noqa: LL101\n") == {1: frozenset({"LL101"})}


def test_two_directives_in_one_comment_combine() -> None:
    source = "x = 1  # noqa: LL101  # leaklint: ignore[LL102]\n"
    assert table_for(source) == {1: frozenset({"LL101", "LL102"})}


def test_a_hash_inside_a_string_is_not_a_comment() -> None:
    source = """\
        a = "# noqa"
        b = '# leaklint: ignore'
        c = '''
        # noqa
        '''
    """
    assert table_for(source) == {}


def test_table_keys_are_one_based_line_numbers() -> None:
    source = """\
        import torch

        losses = []  # noqa: LL101
    """
    assert table_for(source) == {3: frozenset({"LL101"})}


def test_lines_without_a_directive_are_not_in_the_table() -> None:
    assert table_for("x = 1  # just a comment\ny = 2\n") == {}


def test_a_source_without_any_directive_is_not_tokenized(monkeypatch: pytest.MonkeyPatch) -> None:
    import leaklint.suppressions as suppressions

    def no_tokenizing(source: str) -> None:
        raise AssertionError("tokenized a source that holds no directive")

    monkeypatch.setattr(suppressions, "_scan", no_tokenizing)
    assert suppression_table("losses.append(loss)  # keep it\nnoqa = 'leaklint'\n") == {}


def test_a_directive_split_over_lines_or_inside_a_string_still_counts_only_as_a_comment() -> None:
    # The quick look at the whole text sees these; tokenizing then finds no directive comment.
    assert table_for('s = "# noqa"\nt = 1  # leaklint\n# : ignore\n') == {}


def test_untokenizable_source_falls_back_to_a_line_scan() -> None:
    source = 'x = 1  # noqa: LL101\ny = """never closed\n'
    assert suppression_table(source) == {1: frozenset({"LL101"})}


# --- is_suppressed -------------------------------------------------------------------------------


def test_a_directive_on_any_of_the_given_lines_suppresses() -> None:
    # The engine passes the statement's first and last line and the finding's own line.
    source = """\
        history.append(
            loss,
        )  # noqa: LL101
    """
    table = table_for(source)
    assert is_suppressed("LL101", [1, 3, 2], table)
    assert not is_suppressed("LL101", [1, 2], table)


@pytest.mark.parametrize("lines", [[], [0], [99]])
def test_lines_without_entries_do_not_suppress(lines: list[int]) -> None:
    assert not is_suppressed("LL101", lines, {1: ALL_CODES})


def test_is_suppressed_accepts_any_iterable_of_lines() -> None:
    table = {5: frozenset({"LL101"})}
    assert is_suppressed("LL101", iter((4, 5)), table)
    assert is_suppressed("LL101", {5}, table)


# --- the engine: ranges, file-level comments, notebooks ------------------------------------------
import json  # noqa: E402

from leaklint.config import Settings  # noqa: E402
from leaklint.engine import lint_document, lint_text  # noqa: E402
from leaklint.fixes.fixer import fix_notebook, fix_text  # noqa: E402
from leaklint.registry import all_rules  # noqa: E402
from leaklint.suppressions import Suppressions  # noqa: E402

HEAD = "import torch\n\ntotal = 0\nfor x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n"
#: An LL101 finding at the line this holds (one statement in the loop above).
LEAK = "    total += loss\n"


def lint(source: str, *select: str, path: str = "t.py", **settings: object) -> set[tuple[int, str]]:
    rules = all_rules()
    chosen = [rules[code] for code in Settings(select=select or None, **settings).enabled_codes(rules)]  # type: ignore[arg-type]
    outcome = lint_document(textwrap.dedent(source), path, chosen, Settings(select=select or None, **settings))  # type: ignore[arg-type]
    assert outcome.errors == []
    return {(f.line, f.code) for f in outcome.findings}


def ranges_of(source: str) -> list[tuple[int, int]]:
    return [(r.first_line, r.last_line) for r in Suppressions.parse(textwrap.dedent(source)).ranges]


def test_the_leak_these_tests_suppress_is_reported_without_a_comment() -> None:
    assert lint(HEAD + LEAK) == {(7, "LL101")}


def test_a_disable_enable_range_suppresses_the_findings_inside_it() -> None:
    source = HEAD + "    # leaklint: disable[LL101]\n" + LEAK + "    # leaklint: enable[LL101]\n" + LEAK
    assert lint(source) == {(10, "LL101")}


def test_a_bare_disable_suppresses_every_code_until_a_bare_enable() -> None:
    source = HEAD + "    # leaklint: disable\n" + LEAK + "    # leaklint: enable\n" + LEAK
    assert lint(source) == {(10, "LL101")}


def test_a_range_of_other_codes_does_not_suppress() -> None:
    source = HEAD + "    # leaklint: disable[LL102, LL2]\n" + LEAK + "    # leaklint: enable[LL102, LL2]\n"
    assert lint(source) == {(8, "LL101")}


def test_a_range_code_may_be_a_prefix_and_is_case_insensitive() -> None:
    source = HEAD + "    # LeakLint: Disable[ll1]\n" + LEAK
    assert lint(source) == set()


def test_an_unmatched_disable_at_module_level_lasts_to_the_end_of_the_file() -> None:
    source = "# leaklint: disable[LL101]\n" + HEAD + LEAK + "\n\n" + LEAK.strip() + "\n"
    assert lint(source) == set()
    assert ranges_of(source) == [(1, 11)]


def test_an_unmatched_disable_in_a_block_ends_with_the_block() -> None:
    # Ruff's implicit range: up to the first code indented less than the comment.
    source = """\
        def f():
            # leaklint: disable[LL101]
            a = 1
            if a:
                b = 2

            c = 3
        d = 4
    """
    assert ranges_of(source) == [(2, 7)]


def test_an_enable_only_closes_a_disable_with_the_same_codes_in_the_same_block() -> None:
    source = """\
        def f():
            # leaklint: disable[LL101]
            a = 1
        def g():
            # leaklint: enable[LL101]
            b = 2
    """
    # The enable is in another block: the disable ends with f, the enable closes nothing.
    assert ranges_of(source) == [(2, 3)]
    other_codes = "# leaklint: disable[LL101]\na = 1\n# leaklint: enable[LL102]\nb = 2\n"
    assert ranges_of(other_codes) == [(1, 4)]


def test_an_unmatched_enable_suppresses_nothing_and_ends_nothing() -> None:
    source = HEAD + "    # leaklint: enable[LL101]\n" + LEAK
    assert lint(source) == {(8, "LL101")}
    assert ranges_of(source) == []


def test_nested_ranges_of_one_code_cover_their_union() -> None:
    source = """\
        # leaklint: disable[LL101]
        a = 1
        # leaklint: disable[LL101]
        b = 2
        # leaklint: enable[LL101]
        c = 3
        # leaklint: enable[LL101]
        d = 4
    """
    assert ranges_of(source) == [(1, 5), (3, 7)]


def test_overlapping_ranges_of_different_codes_each_end_at_their_own_enable() -> None:
    source = HEAD + (
        "    # leaklint: disable[LL101]\n"
        "    # leaklint: disable[LL102]\n"
        + LEAK
        + "    # leaklint: enable[LL101]\n"
        + LEAK
        + "    # leaklint: enable[LL102]\n"
    )
    assert lint(source) == {(11, "LL101")}
    assert ranges_of(source) == [(7, 10), (8, 12)]


def test_a_range_comment_after_code_or_oddly_indented_is_ignored() -> None:
    assert ranges_of("a = 1  # leaklint: disable[LL101]\nb = 2\n") == []
    assert ranges_of("if a:\n    b = 1\n  # leaklint: disable[LL101]\n    c = 2\n") == []


def test_a_range_must_hold_every_line_of_the_finding() -> None:
    source = HEAD + "    total += (\n        # leaklint: disable[LL101]\n        loss\n    )\n"
    assert lint(source) == {(7, "LL101")}


def test_a_file_level_noqa_suppresses_its_codes_everywhere_in_the_file() -> None:
    assert lint(HEAD + LEAK + "# leaklint: noqa: LL101\n") == set()
    assert lint("# leaklint: noqa: LL2, E501\n" + HEAD + LEAK) == {(8, "LL101")}


def test_a_bare_file_level_noqa_suppresses_every_code() -> None:
    assert lint("# leaklint: NOQA\n" + HEAD + LEAK) == set()


def test_a_file_level_noqa_after_code_is_not_file_level() -> None:
    # As in Ruff: it must stand alone on its line (and it is no line-level directive either).
    assert lint(HEAD + LEAK.rstrip("\n") + "  # leaklint: noqa: LL101\n") == {(7, "LL101")}


def test_a_file_level_noqa_with_a_colon_and_no_code_suppresses_nothing() -> None:
    assert lint("# leaklint: noqa: because\n" + HEAD + LEAK) == {(8, "LL101")}


def nb(*cells: str) -> str:
    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c} for c in cells],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=1)


def notebook_findings(text: str, *select: str) -> set[tuple[int | None, int, str]]:
    rules = all_rules()
    settings = Settings(select=select or None)
    outcome = lint_document(text, "n.ipynb", [rules[c] for c in settings.enabled_codes(rules)], settings)
    assert outcome.errors == []
    return {(f.cell, f.line, f.code) for f in outcome.findings}


SETUP_CELL = "import torch\ntotal = 0"
LOOP_CELL = "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    total += loss"


def test_in_a_notebook_a_range_never_leaves_its_cell() -> None:
    text = nb(SETUP_CELL + "\n# leaklint: disable[LL101]", LOOP_CELL)
    assert notebook_findings(text) == {(2, 4, "LL101")}
    inside = nb(SETUP_CELL, "# leaklint: disable[LL101]\n" + LOOP_CELL, LOOP_CELL)
    assert notebook_findings(inside) == {(3, 4, "LL101")}
    # An enable in the next cell closes nothing: the disable already ended with its cell.
    across = nb(SETUP_CELL, "# leaklint: disable[LL101]\n" + LOOP_CELL, "# leaklint: enable[LL101]\n" + LOOP_CELL)
    assert notebook_findings(across) == {(3, 5, "LL101")}


def test_in_a_notebook_a_file_level_noqa_in_any_cell_applies_to_every_cell() -> None:
    text = nb(SETUP_CELL, LOOP_CELL, "# leaklint: noqa: LL101\nprint(total)")
    assert notebook_findings(text) == set()


def test_in_a_notebook_line_suppressions_work_per_cell() -> None:
    text = nb(SETUP_CELL, LOOP_CELL + "  # noqa: LL101", LOOP_CELL)
    assert notebook_findings(text) == {(3, 4, "LL101")}


# --- LL901 unused-suppression ----------------------------------------------------------------------


def test_ll901_is_off_by_default() -> None:
    assert not all_rules()["LL901"].default_enabled
    assert lint(HEAD + "    total += loss.item()  # noqa: LL101\n") == set()


def test_ll901_reports_a_code_that_suppressed_nothing_and_not_one_that_did() -> None:
    source = HEAD + LEAK.rstrip("\n") + "  # noqa: LL101\n    other = loss.item()  # noqa: LL101\n"
    assert lint(source, "LL1", "LL901") == {(8, "LL901")}


def test_ll901_leaves_foreign_codes_bare_noqa_and_rules_that_did_not_run_alone() -> None:
    source = HEAD + "    a = 1  # noqa: E501\n    b = 2  # noqa\n    c = 3  # noqa: LL301\n    d = 4  # noqa: LL1\n"
    # LL301 and the rest of LL1 did not run: only LL101 and LL901 were selected.
    assert lint(source, "LL101", "LL901") == set()
    # With every rule on, LL301 and the prefix LL1 are judged.
    assert lint(source, "ALL") == {(9, "LL901"), (10, "LL901")}


def test_ll901_leaves_codes_of_rules_ignored_for_the_file_alone() -> None:
    source = HEAD + "    a = 1  # noqa: LL101\n"
    assert lint(source, "LL101", "LL901", per_file_ignores=(("t.py", ("LL101",)),)) == set()


def test_ll901_reports_unused_blanket_leaklint_comments_of_every_kind() -> None:
    source = HEAD + "    a = 1  # leaklint: ignore\n    # leaklint: disable\n    b = 2\n    # leaklint: enable\n"
    assert lint(source, "LL101", "LL901") == {(7, "LL901"), (8, "LL901")}


def test_ll901_reports_unused_range_and_file_codes() -> None:
    source = "# leaklint: noqa: LL102\n" + HEAD + "    # leaklint: disable[LL101]\n    a = 1\n    # leaklint: enable[LL101]\n"
    assert lint(source, "LL1", "LL901") == {(1, "LL901"), (8, "LL901")}


def test_ll901_counts_a_suppressed_low_confidence_finding_as_used() -> None:
    from leaklint.findings import Confidence

    rules = all_rules()
    outcome = lint_text(textwrap.dedent(HEAD + LEAK), "t.py", [rules["LL101"]], Settings(min_confidence=Confidence.LOW))
    assert outcome.findings  # the leak is there at every confidence
    for confidence in (Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW):
        assert lint(HEAD + LEAK.rstrip("\n") + "  # noqa: LL101\n", "LL101", "LL901", min_confidence=confidence) == set()


def test_ll901_never_reports_a_comment_naming_it_nor_in_a_file_exempting_it() -> None:
    assert lint(HEAD + "    a = 1  # noqa: LL101, LL901\n", "LL101", "LL901") == set()
    assert lint("# leaklint: noqa: LL901\n" + HEAD + "    a = 1  # noqa: LL101\n", "LL101", "LL901") == set()
    ranged = HEAD + "    # leaklint: disable[LL901]\n    a = 1  # noqa: LL101\n    # leaklint: enable[LL901]\n    b = 1  # noqa: LL101\n"
    assert lint(ranged, "LL101", "LL901") == {(10, "LL901")}


def test_ll901_in_a_notebook_is_reported_in_its_cell() -> None:
    text = nb(SETUP_CELL, LOOP_CELL.replace("total += loss", "total += loss.item()  # noqa: LL101"))
    assert notebook_findings(text, "LL101", "LL901") == {(2, 4, "LL901")}


# --- LL901's fix ---------------------------------------------------------------------------------


def fixed(source: str, *select: str) -> str:
    rules = all_rules()
    settings = Settings(select=select)
    result = fix_text(textwrap.dedent(source), "t.py", [rules[c] for c in settings.enabled_codes(rules)], settings, unsafe=False)
    assert result.errors == []
    compile(result.fixed, "t.py", "exec")
    assert not [f for f in result.remaining if f.code == "LL901"]
    return result.fixed


@pytest.mark.parametrize(
    "line, after",
    [
        ("a = 1  # noqa: LL101", "a = 1"),
        ("a = 1  # noqa: LL101, E501", "a = 1  # noqa: E501"),
        ("a = 1  # noqa: E501, LL101 LL102  why", "a = 1  # noqa: E501  why"),
        ("a = 1  # leaklint: ignore[LL101]", "a = 1"),
        ("a = 1  # leaklint: ignore[LL101] tiny buffer", "a = 1  # tiny buffer"),
        ("a = 1  # leaklint: ignore[LL101, LL102]  # type: ignore", "a = 1  # type: ignore"),
        ("a = 1  # type: ignore  # noqa: LL101", "a = 1  # type: ignore"),
        ("a = 1  # leaklint: ignore", "a = 1"),
        ("a = 1  # noqa: LL101  # leaklint: ignore[LL102]", "a = 1"),
        ("a = (1,  # noqa: LL101\n     2)", "a = (1,\n     2)"),
    ],
)
def test_the_fix_removes_only_unused_leaklint_codes(line: str, after: str) -> None:
    assert fixed(f"x = 0\n{line}\ny = 2\n", "LL1", "LL901") == f"x = 0\n{after}\ny = 2\n"


def test_the_fix_removes_an_own_line_comment_with_its_line_and_both_comments_of_a_range() -> None:
    source = "x = 0\n# leaklint: disable[LL101]\ny = 1\n# leaklint: enable[LL101]\n# leaklint: noqa: LL102\nz = 2\n"
    assert fixed(source, "LL1", "LL901") == "x = 0\ny = 1\nz = 2\n"
    partly = "# leaklint: disable[LL101, E501]\ny = 1\n# leaklint: enable[LL101, E501]\n"
    assert fixed(partly, "LL1", "LL901") == "# leaklint: disable[E501]\ny = 1\n# leaklint: enable[E501]\n"


def test_the_fix_keeps_a_used_code_and_the_finding_it_suppresses() -> None:
    source = HEAD + LEAK.rstrip("\n") + "  # noqa: LL101, LL102\n"
    assert fixed(source, "LL1", "LL901") == HEAD + LEAK.rstrip("\n") + "  # noqa: LL101\n"


def test_the_fix_keeps_crlf_line_endings_and_the_program() -> None:
    source = "x = 0\r\n# leaklint: ignore[LL101]\r\ny = [1,  # noqa: LL101\r\n  2]\r\n"
    assert fixed(source, "LL1", "LL901") == "x = 0\r\ny = [1,\r\n  2]\r\n"


def test_the_fix_in_a_notebook_edits_the_cells() -> None:
    text = nb(SETUP_CELL, "# leaklint: disable[LL102]\n" + LOOP_CELL.replace("total += loss", "total += loss.item()  # noqa: LL101, E501"))
    rules = all_rules()
    settings = Settings(select=("LL1", "LL901"))
    result = fix_notebook(text, "n.ipynb", [rules[c] for c in settings.enabled_codes(rules)], settings, unsafe=False)
    assert result.errors == [] and result.remaining == []
    cells = [cell["source"] for cell in json.loads(result.fixed)["cells"]]
    assert cells == [SETUP_CELL, LOOP_CELL.replace("total += loss", "total += loss.item()  # noqa: E501")]


def test_leaklint_fix_on_the_command_line_rewrites_the_comments(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from conftest import run_leaklint

    (tmp_path / "pyproject.toml").write_text('[tool.leaklint]\nextend-select = ["LL901"]\n')
    script = tmp_path / "train.py"
    script.write_text(HEAD + "    total += loss.item()  # noqa: LL101, E501\n    # leaklint: disable[LL101]\n    print(total)\n")
    result = run_leaklint("--fix", "--no-cache", str(script), cwd=tmp_path)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert script.read_text() == HEAD + "    total += loss.item()  # noqa: E501\n    print(total)\n"


def _with_stale_comments(source: str) -> str:
    """``source`` with a suppression comment at the end of every logical line and a range comment
    before every top-level ``def``: most of them unused."""
    import io
    import tokenize

    lines = source.splitlines(keepends=True)
    ends = {token.start[0] for token in tokenize.generate_tokens(io.StringIO(source).readline) if token.type == tokenize.NEWLINE}
    commented = {token.start[0] for token in tokenize.generate_tokens(io.StringIO(source).readline) if token.type == tokenize.COMMENT}
    out = []
    for number, line in enumerate(lines, start=1):
        if line.startswith("def "):
            out.append("# leaklint: disable[LL2, LL101]\n")
        body = line.rstrip("\r\n")
        if number in ends and number not in commented and body.strip():
            line = body + "  # leaklint: ignore[LL3, LL102] kept\n"
        out.append(line)
    return "".join(out)


#: Every fifth fixture (all of them take over a minute and a half) and LL901's own.
_SAMPLE = [p for i, p in enumerate(sorted((Path(__file__).parents[2] / "fixtures").glob("*.py"))) if i % 5 == 0 or "unused_suppression" in p.name]


@pytest.mark.parametrize("path", _SAMPLE, ids=lambda p: p.name)
def test_the_fix_of_ll901_never_changes_the_program(path: Path) -> None:
    import ast

    source = _with_stale_comments(path.read_text(encoding="utf-8"))
    rules = all_rules()
    settings = Settings(select=("ALL",), fixable=("LL901",))  # only LL901's fixes: other rules' change code
    result = fix_text(source, str(path), list(rules.values()), settings, unsafe=False)
    assert result.errors == []
    assert ast.dump(ast.parse(result.fixed)) == ast.dump(ast.parse(source))
    assert [f for f in result.remaining if f.code == "LL901"] == []
    before = {(f.code, f.message) for f in lint_text(path.read_text(encoding="utf-8"), str(path), list(rules.values()), settings).findings}
    after = {(f.code, f.message) for f in result.remaining}
    assert after <= before  # what the comments still suppress was a finding before
