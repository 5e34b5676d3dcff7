"""Inline suppression comments: which syntaxes count, and what each one silences."""

from __future__ import annotations

import textwrap

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
