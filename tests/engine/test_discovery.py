"""Which files a run lints: walking, excludes, .gitignore, explicit paths, and bad paths.

Every test builds a small tree in ``tmp_path``, makes it the current directory, and calls
:func:`discover` the way the command line does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leaklint.config import Settings
from leaklint.discovery import STDIN, Discovery, discover
from leaklint.findings import ErrorKind, FileError

needs_symlinks = pytest.mark.skipif(os.name == "nt", reason="needs POSIX symlinks")
needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def make(*paths: str) -> None:
    """Create files (and their directories); a path ending in ``/`` is an empty directory."""
    for path in paths:
        target = Path(path)
        if path.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x = 1\n")


def write(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text)


def run(*paths: str, force_exclude: bool = False, **settings: object) -> Discovery:
    configured = Settings(root=Path.cwd(), **settings)  # type: ignore[arg-type]
    return discover(paths, configured, force_exclude=force_exclude)


def files(*paths: str, **options: object) -> list[str]:
    found = run(*paths, **options)  # type: ignore[arg-type]
    assert found.errors == (), found.errors
    return list(found.files)


# --- walking --------------------------------------------------------------------------------------


def test_directories_are_walked_in_sorted_order() -> None:
    make("b.py", "a/z.py", "a/b/c.py", "c/a.py", "a.py")
    assert files(".") == ["a.py", "a/b/c.py", "a/z.py", "b.py", "c/a.py"]


def test_only_python_sources_and_stubs_are_collected() -> None:
    make("a.py", "b.pyi", "c.pyc", "d.txt", "setup.cfg", "e.py.bak")
    assert files(".") == ["a.py", "b.pyi"]


def test_hidden_directories_are_walked() -> None:
    make(".scripts/train.py")
    assert files(".") == [".scripts/train.py"]


def test_a_directory_named_like_a_python_file_is_walked() -> None:
    make("x.py/train.py")
    assert files(".") == ["x.py/train.py"]
    assert files("x.py") == ["x.py/train.py"]


@needs_fifos
def test_a_fifo_met_while_walking_is_skipped() -> None:
    make("a.py")
    os.mkfifo("pipe.py")
    assert files(".") == ["a.py"]


# --- excludes -------------------------------------------------------------------------------------


def test_default_excludes_are_skipped() -> None:
    make("src/a.py", ".venv/lib/b.py", "build/c.py", "pkg/__pycache__/d.py", "node_modules/e.py")
    assert files(".") == ["src/a.py"]


def test_extend_exclude_skips_more() -> None:
    make("src/a.py", "src/generated/b.py", "notebooks/c.py")
    assert files(".", extend_exclude=("src/generated", "notebooks")) == ["src/a.py"]


def test_an_excluded_directory_named_explicitly_is_walked() -> None:
    make("build/gen.py", "build/sub/more.py")
    assert files("build") == ["build/gen.py", "build/sub/more.py"]


def test_force_exclude_drops_an_excluded_directory_named_explicitly() -> None:
    make("build/gen.py")
    assert files("build", force_exclude=True) == []


# --- .gitignore -----------------------------------------------------------------------------------


def test_a_gitignore_at_the_root_is_honoured() -> None:
    make("keep.py", "scratch.py", "tmp/a.py")
    write(".gitignore", "scratch.py\ntmp/\n")
    assert files(".") == ["keep.py"]


def test_a_nested_gitignore_applies_only_below_its_directory() -> None:
    make("a/gen.py", "a/keep.py", "b/gen.py")
    write("a/.gitignore", "gen.py\n")
    assert files(".") == ["a/keep.py", "b/gen.py"]


def test_a_negation_re_includes_a_file() -> None:
    make("a.py", "b.py", "keep.py")
    write(".gitignore", "*.py\n!keep.py\n")
    assert files(".") == ["keep.py"]


def test_a_nested_negation_beats_the_root_gitignore() -> None:
    make("a.py", "sub/keep.py")
    write(".gitignore", "*.py\n")
    write("sub/.gitignore", "!keep.py\n")
    assert files(".") == ["sub/keep.py"]


def test_respect_gitignore_false_turns_gitignore_off() -> None:
    make("a.py")
    write(".gitignore", "*.py\n")
    assert files(".", respect_gitignore=False) == ["a.py"]


def test_ancestor_gitignores_apply_up_to_the_repository_root() -> None:
    make(".git/", "src/pkg/gen.py", "src/pkg/keep.py")
    write(".gitignore", "gen.py\n")
    write("src/.gitignore", "!keep.py\nkeep.py\n")
    assert files("src/pkg") == []


def test_gitignores_above_the_repository_root_do_not_apply(tmp_path: Path) -> None:
    make("repo/.git/", "repo/src/a.py")
    write(".gitignore", "a.py\n")
    assert files("repo/src") == ["repo/src/a.py"]


def test_outside_a_repository_only_gitignores_at_and_below_the_walked_directory_apply() -> None:
    make("project/src/a.py", "project/src/b.py")
    write("project/.gitignore", "a.py\n")
    write("project/src/.gitignore", "b.py\n")
    assert files("project/src") == ["project/src/a.py"]
    assert files("project") == []


def test_the_repository_info_exclude_is_honoured() -> None:
    make(".git/info/", "a.py", "local.py")
    write(".git/info/exclude", "local.py\n")
    assert files(".") == ["a.py"]


# --- files named explicitly -----------------------------------------------------------------------


def test_an_explicit_file_is_always_linted() -> None:
    make("build/gen.py", "ignored.py", "script")
    write(".gitignore", "ignored.py\n")
    assert files("build/gen.py", "ignored.py", "script") == ["build/gen.py", "ignored.py", "script"]


def test_force_exclude_drops_excluded_and_ignored_explicit_files() -> None:
    make(".git/", "build/gen.py", "ignored.py", "tmp/x.py", "keep.py")
    write(".gitignore", "ignored.py\ntmp/\n")
    found = files("build/gen.py", "ignored.py", "tmp/x.py", "keep.py", force_exclude=True)
    assert found == ["keep.py"]


def test_force_exclude_keeps_an_explicit_file_that_is_not_python() -> None:
    make("script")
    assert files("script", force_exclude=True) == ["script"]


def test_stdin_is_passed_through_first() -> None:
    make("b.py", "a.py")
    assert files("b.py", STDIN, "a.py") == [STDIN, "a.py", "b.py"]


def test_stdin_is_kept_with_force_exclude() -> None:
    assert files(STDIN, force_exclude=True) == [STDIN]


# --- displayed paths and duplicates ---------------------------------------------------------------


@pytest.mark.parametrize(
    "argument, expected",
    [
        (".", "sub/a.py"),
        ("sub", "sub/a.py"),
        ("sub/", "sub/a.py"),
        ("./sub", "sub/a.py"),
        ("./sub/a.py", "sub/a.py"),
        ("sub/../sub/a.py", "sub/a.py"),
    ],
)
def test_displayed_paths_keep_the_argument_s_form_normalised(argument: str, expected: str) -> None:
    make("sub/a.py")
    assert files(argument) == [expected]


def test_absolute_arguments_stay_absolute(tmp_path: Path) -> None:
    make("sub/a.py")
    assert files(str(tmp_path / "sub")) == [(tmp_path / "sub" / "a.py").as_posix()]


def test_arguments_outside_the_current_directory_keep_their_dots(tmp_path: Path) -> None:
    make("elsewhere/a.py", "here/")
    os.chdir("here")
    assert files("../elsewhere") == ["../elsewhere/a.py"]


def test_the_same_file_reached_twice_is_listed_once() -> None:
    make("sub/a.py")
    assert files("sub/a.py", ".", "./sub/") == ["sub/a.py"]


@needs_symlinks
def test_a_duplicate_keeps_the_name_it_was_first_reached_by() -> None:
    make("real/a.py")
    os.symlink("real/a.py", "link.py")
    assert files("link.py", "real") == ["link.py"]
    assert files("real", "link.py") == ["real/a.py"]


# --- symbolic links -------------------------------------------------------------------------------


@needs_symlinks
def test_a_symlinked_file_is_linted_by_its_link_path() -> None:
    make("data/real.txt")
    os.symlink("data/real.txt", "alias.py")
    assert files(".") == ["alias.py"]


@needs_symlinks
def test_symlinked_directories_are_not_followed_while_walking() -> None:
    make("pkg/a.py")
    os.symlink("pkg", "alias")
    os.symlink(".", "pkg/self")
    assert files(".") == ["pkg/a.py"]


@needs_symlinks
def test_a_symlinked_directory_named_explicitly_is_walked() -> None:
    make("pkg/a.py")
    os.symlink("pkg", "alias")
    assert files("alias") == ["alias/a.py"]


# --- bad paths ------------------------------------------------------------------------------------


def error(path: str, kind: ErrorKind, reason: str) -> FileError:
    return FileError(path, kind, reason)


def test_a_path_that_does_not_exist() -> None:
    found = run("missing.py")
    assert found.errors == (error("missing.py", ErrorKind.NOT_FOUND, "no such file or directory"),)


def test_errors_do_not_stop_discovery_of_other_paths() -> None:
    make("a.py")
    found = run("missing", "a.py", "also-missing")
    assert found.files == ("a.py",)
    assert [e.path for e in found.errors] == ["also-missing", "missing"]


@needs_symlinks
def test_a_broken_symlink_named_explicitly() -> None:
    os.symlink("gone.py", "broken.py")
    expected = error("broken.py", ErrorKind.NOT_FOUND, "broken symbolic link")
    assert run("broken.py").errors == (expected,)


@needs_symlinks
def test_a_broken_symlink_met_while_walking() -> None:
    make("src/a.py")
    os.symlink("gone.py", "src/broken.py")
    found = run("src")
    assert found.files == ("src/a.py",)
    assert found.errors == (error("src/broken.py", ErrorKind.NOT_FOUND, "broken symbolic link"),)


@needs_symlinks
def test_an_editor_lock_link_is_not_an_error() -> None:
    make("a.py")
    os.symlink("user@host.1234:1700000000", ".#a.py")  # Emacs's lock beside a file being edited
    assert files(".") == ["a.py"]


@needs_symlinks
def test_a_symlink_loop_named_explicitly() -> None:
    os.symlink("loop.py", "loop.py")
    assert run("loop.py").errors == (error("loop.py", ErrorKind.IO, "symbolic link loop"),)


@needs_symlinks
def test_a_symlink_loop_met_while_walking() -> None:
    make("src/")
    os.symlink("a.py", "src/a.py")
    assert run("src").errors == (error("src/a.py", ErrorKind.IO, "symbolic link loop"),)


@needs_fifos
def test_a_fifo_named_explicitly_is_not_a_regular_file() -> None:
    os.mkfifo("pipe.py")
    assert run("pipe.py").errors == (error("pipe.py", ErrorKind.IO, "not a regular file"),)


def test_a_directory_that_cannot_be_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    make("ok/a.py", "secret/b.py")
    real_scandir = os.scandir

    def scandir(path: str):  # type: ignore[no-untyped-def]
        if os.path.basename(path) == "secret":
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = run(".")
    assert found.files == ("ok/a.py",)
    assert found.errors == (error("secret", ErrorKind.IO, "permission denied"),)


def test_a_path_through_a_file_is_not_found() -> None:
    make("a.py")
    assert run("a.py/b.py").errors[0].kind is ErrorKind.NOT_FOUND


def test_force_exclude_outside_a_repository_reads_the_file_s_own_directory() -> None:
    make("sub/gen.py")
    write("sub/.gitignore", "gen.py\n")
    assert files("sub/gen.py", force_exclude=True) == []


def test_an_empty_argument_is_not_the_current_directory() -> None:
    make("a.py")
    assert run("").errors == (error("", ErrorKind.NOT_FOUND, "no such file or directory"),)
