"""gitignore(5), one behaviour per row.

Each row is the text of a ``.gitignore``, a path relative to its directory, whether that path is a
directory, and the verdict: True ignored, False re-included by a negation, None no opinion. Every
row agrees with ``git check-ignore``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leaklint.gitignore import GitIgnore, IgnoreStack, Pattern, find_repository_root

FILE, DIR = False, True


def row(text: str, path: str, is_dir: bool, expected: bool | None, why: str) -> object:
    return pytest.param(text, path, is_dir, expected, id=why)


SYNTAX = [
    row("", "a.py", FILE, None, "an empty file has no opinion"),
    row("#a.py", "#a.py", FILE, None, "a hash starts a comment"),
    row("\\#a.py", "#a.py", FILE, True, "an escaped hash is literal"),
    row("   ", "a.py", FILE, None, "a line of spaces is blank"),
    row("a.py   ", "a.py", FILE, True, "trailing spaces are trimmed"),
    row("a\\ ", "a ", FILE, True, "an escaped trailing space is kept"),
    row("a\\ ", "a", FILE, None, "an escaped trailing space must match"),
    row("a.py\t", "a.py", FILE, None, "trailing tabs are not trimmed"),
    row(" a.py", "a.py", FILE, None, "leading spaces are significant"),
    row("a.py\r\n", "a.py", FILE, True, "a CRLF line ending is not part of the pattern"),
    row("\ufeffa.py", "a.py", FILE, True, "a byte order mark is skipped"),
]

NEGATION = [
    row("*.py\n!keep.py", "keep.py", FILE, False, "a negation re-includes"),
    row("*.py\n!keep.py", "other.py", FILE, True, "a negation only re-includes what it matches"),
    row("!keep.py\n*.py", "keep.py", FILE, True, "the last matching line wins"),
    row("!keep.py", "keep.py", FILE, False, "a lone negation still has an opinion"),
    row("\\!a.py", "!a.py", FILE, True, "an escaped bang is literal"),
    row("!", "!", FILE, None, "a bare bang is an empty pattern"),
]

DIRECTORIES = [
    row("build/", "build", DIR, True, "a trailing slash matches a directory"),
    row("build/", "build", FILE, None, "a trailing slash does not match a file"),
    row("build/", "src/build", DIR, True, "a trailing slash alone does not anchor"),
    row("build", "build", DIR, True, "a pattern without a slash matches directories too"),
]

ANCHORING = [
    row("a.py", "src/deep/a.py", FILE, True, "no slash matches at any depth"),
    row("/a.py", "a.py", FILE, True, "a leading slash anchors to the file's directory"),
    row("/a.py", "src/a.py", FILE, None, "an anchored pattern does not match deeper"),
    row("doc/frotz", "doc/frotz", FILE, True, "a middle slash anchors"),
    row("doc/frotz", "x/doc/frotz", FILE, None, "a middle slash does not match deeper"),
    row("doc/frotz/", "doc/frotz", DIR, True, "anchored and directory-only together"),
]

WILDCARDS = [
    row("*.py", "train.py", FILE, True, "a star matches within a name"),
    row("*.py", "train.pyc", FILE, None, "the whole name must match"),
    row("*", "src/a.py", FILE, True, "a lone star matches every name"),
    row("src/*.py", "src/a.py", FILE, True, "a star in an anchored pattern"),
    row("src/*.py", "src/sub/a.py", FILE, None, "a star never crosses a slash"),
    row("?.py", "a.py", FILE, True, "a question mark matches one character"),
    row("?.py", "ab.py", FILE, None, "a question mark matches exactly one character"),
    row("a/?/c", "a/bb/c", FILE, None, "a question mark never matches a slash"),
    row("\\*.py", "*.py", FILE, True, "an escaped star is literal"),
    row("\\*.py", "a.py", FILE, None, "an escaped star does not glob"),
    row("a\\", "a", FILE, None, "a trailing backslash never matches"),
]

CLASSES = [
    row("[abc].py", "b.py", FILE, True, "a class matches one of its characters"),
    row("[abc].py", "d.py", FILE, None, "a class matches nothing else"),
    row("[!abc].py", "d.py", FILE, True, "a leading bang negates a class"),
    row("[!abc].py", "a.py", FILE, None, "a negated class excludes its characters"),
    row("[^abc].py", "d.py", FILE, True, "a leading caret negates a class too"),
    row("[a-c]x", "bx", FILE, True, "a range"),
    row("[z-a]x", "mx", FILE, None, "an inverted range matches nothing"),
    row("[]]x", "]x", FILE, True, "a bracket first in a class is literal"),
    row("[a-]x", "-x", FILE, True, "a dash last in a class is literal"),
    row("[\\]]x", "]x", FILE, True, "a backslash escapes inside a class"),
    row("[[:digit:]].py", "7.py", FILE, True, "a POSIX class"),
    row("[[:bogus:]].py", "7.py", FILE, None, "an unknown POSIX class never matches"),
    row("a[/]b", "a/b", FILE, None, "a class never matches a slash"),
    row("[abc", "[abc", FILE, None, "an unterminated class never matches"),
]

DOUBLE_STARS = [
    row("**/foo", "foo", FILE, True, "leading **/ matches no directory"),
    row("**/foo", "a/b/foo", FILE, True, "leading **/ matches any directories"),
    row("**/foo/bar", "x/foo/bar", FILE, True, "leading **/ before an anchored path"),
    row("abc/**", "abc/x/y.py", FILE, True, "trailing /** matches everything inside"),
    row("abc/**", "abc", DIR, None, "trailing /** does not match the directory itself"),
    row("a/**/b", "a/b", FILE, True, "/**/ matches no directory"),
    row("a/**/b", "a/x/y/b", FILE, True, "/**/ matches several directories"),
    row("a/**/b", "a/xb", FILE, None, "/**/ keeps its slashes"),
    row("x/a**b", "x/aqb", FILE, True, "** inside a name is a plain star"),
    row("x/a**b", "x/a/b", FILE, None, "** inside a name does not cross a slash"),
    row("**", "a/b/c.py", FILE, True, "a lone ** matches everything"),
]


@pytest.mark.parametrize(
    "text, path, is_dir, expected",
    SYNTAX + NEGATION + DIRECTORIES + ANCHORING + WILDCARDS + CLASSES + DOUBLE_STARS,
)
def test_pattern_semantics(text: str, path: str, is_dir: bool, expected: bool | None) -> None:
    assert GitIgnore.from_text(text).match(path, is_dir) is expected


def test_blank_lines_and_comments_compile_to_nothing() -> None:
    assert [Pattern.parse(line) for line in ("", "   ", "# note", "!", "/")] == [None] * 5


def test_each_pattern_is_compiled_once() -> None:
    pattern = Pattern.parse("!src/**/*.py")
    assert pattern is not None
    assert (pattern.negated, pattern.dir_only, pattern.basename_only) == (True, False, False)
    assert pattern.regex.fullmatch("src/a/b.py")


def test_from_file_reads_patterns_relative_to_its_directory(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    ignore = GitIgnore.from_file(tmp_path / ".gitignore")
    assert ignore.base == str(tmp_path)
    assert ignore.match("x.log", False) is True


def test_an_unreadable_or_missing_file_is_empty(tmp_path: Path) -> None:
    assert GitIgnore.from_file(tmp_path / "missing").patterns == ()
    (tmp_path / "dir").mkdir()
    assert GitIgnore.from_file(tmp_path / "dir").patterns == ()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_gitignore_is_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".gitignore")
    assert GitIgnore.from_file(tmp_path / ".gitignore").patterns == ()


# --- the stack of files a walk carries ------------------------------------------------------------


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    return repo


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def is_ignored(path: Path, is_dir: bool = False) -> bool:
    return IgnoreStack.locate(path, is_dir=is_dir)[1]


def test_the_repository_root_is_the_nearest_directory_with_dot_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "a" / "b").mkdir(parents=True)
    assert find_repository_root(repo / "a" / "b") == str(repo)
    assert find_repository_root(tmp_path) is None


def test_a_deeper_gitignore_beats_a_shallower_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / ".gitignore", "*.py\n")
    write(repo / "keep" / ".gitignore", "!*.py\n")
    assert is_ignored(repo / "keep" / "a.py") is False
    assert is_ignored(repo / "other" / "a.py") is True


def test_info_exclude_applies_below_every_gitignore(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / ".git" / "info" / "exclude", "*.py\nscratch/\n")
    write(repo / ".gitignore", "!keep.py\n")
    assert is_ignored(repo / "a.py") is True
    assert is_ignored(repo / "keep.py") is False
    assert is_ignored(repo / "scratch", is_dir=True) is True


def test_a_file_below_an_ignored_directory_cannot_be_re_included(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / ".gitignore", "build/\n!build/keep.py\n")
    assert is_ignored(repo / "build" / "keep.py") is True


def test_ignoring_a_directory_s_contents_leaves_room_to_re_include(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / ".gitignore", "build/*\n!build/keep.py\n")
    assert is_ignored(repo / "build" / "keep.py") is False
    assert is_ignored(repo / "build" / "other.py") is True


def test_outside_a_repository_a_directory_s_own_gitignore_does_not_apply_to_it(
    tmp_path: Path,
) -> None:
    write(tmp_path / "project" / ".gitignore", "project/\n")
    write(tmp_path / ".gitignore", "project/\n")
    assert is_ignored(tmp_path / "project", is_dir=True) is False


def test_a_symlinked_gitignore_is_not_followed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / "patterns.txt", "*.py\n")
    os.symlink("patterns.txt", repo / ".gitignore")
    assert is_ignored(repo / "a.py") is False


def test_entering_a_nested_repository_starts_afresh(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / ".gitignore", "*.py\n")
    (repo / "vendored" / ".git").mkdir(parents=True)
    stack = IgnoreStack.locate(repo, is_dir=True)[0].enter(str(repo)).enter(str(repo / "vendored"))
    assert stack.match(str(repo / "vendored" / "a.py"), is_dir=False) is False


def test_a_worktree_s_dot_git_file_leads_to_info_exclude(tmp_path: Path) -> None:
    main = make_repo(tmp_path)
    write(main / ".git" / "info" / "exclude", "*.py\n")
    write(main / ".git" / "worktrees" / "wt" / "commondir", "../..\n")
    worktree = tmp_path / "wt"
    write(worktree / ".git", f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    assert is_ignored(worktree / "a.py") is True
