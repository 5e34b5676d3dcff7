"""Code that Python compiles in every run (dataclass methods, the functions leaklint writes per node
class) is kept between runs: the same classes and functions, faster."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import LEAKY_LOOP, run_leaklint, text

from leaklint import code_cache
from leaklint.code_cache import ENVIRONMENT_VARIABLE, cache_directory
from leaklint.code_cache import reusing_compiled_code as reusing_code_of

#: The classes below are defined in this test module: keep its package, as the command keeps
#: leaklint's and libcst's.
THIS_PACKAGE = frozenset({__name__.partition(".")[0]})


def reusing_compiled_code(path: str | None, packages: frozenset[str] = THIS_PACKAGE):  # type: ignore[no-untyped-def]
    return reusing_code_of(path, packages)


def define_classes() -> tuple[type, type]:
    """Two dataclasses of the kinds libcst defines: frozen with defaults, and a factory field."""

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0

    @dataclasses.dataclass
    class Bag:
        items: list = dataclasses.field(default_factory=list)

    return Point, Bag


def behaviour(point: type, bag: type) -> tuple:
    """What the generated methods do, for comparing classes defined with and without the cache."""
    a, b = point(1), point(1, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 3
    first, second = bag(), bag()
    first.items.append(1)
    return (a == b, hash(a) == hash(b), repr(a), a != point(2), repr(first), second.items, bag([5]).items)


def test_a_first_run_compiles_and_stores_the_next_reuses_every_text(tmp_path: Path) -> None:
    path = str(tmp_path / "methods.marshal")
    with reusing_compiled_code(path) as first:
        classes = define_classes()
    assert first.compiled and first.reused == 0
    assert os.path.exists(path)
    with reusing_compiled_code(path) as second:
        reused_classes = define_classes()
    assert not second.compiled and second.reused == len(first.compiled)
    assert behaviour(*reused_classes) == behaviour(*classes) == behaviour(*define_classes())


def test_functions_leaklint_writes_are_kept_too(tmp_path: Path) -> None:
    """The converters, walk plans and gate listers are written per node class and compiled with
    :func:`compiled`: inside the command's block from the file, outside it afresh."""
    source = "def double(x):\n    return 2 * x\n"
    path = str(tmp_path / "code.marshal")
    with reusing_compiled_code(path) as first:
        namespace: dict = {}
        exec(code_cache.compiled(source), namespace)
    assert source in first.compiled and namespace["double"](4) == 8
    with reusing_compiled_code(path) as second:
        assert code_cache.compiled(source) is code_cache.compiled(source)
    assert second.reused == 2 and not second.compiled
    outside = code_cache.compiled(source)
    assert outside is not code_cache.compiled(source) and outside.co_filename == "<string>"


def test_a_file_grown_past_the_limit_keeps_only_what_a_run_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts of classes since edited or upgraded are never looked up again: they go once the
    file holds more texts than the limit, and a run compiles something new."""
    import marshal
    from importlib.util import MAGIC_NUMBER

    stale = {f"x = {n}": compile(f"x = {n}", "<string>", "exec") for n in range(30)}
    path = tmp_path / "code.marshal"
    path.write_bytes(MAGIC_NUMBER + marshal.dumps(stale))
    monkeypatch.setattr(code_cache, "MAX_STORED_TEXTS", 20)
    with reusing_compiled_code(str(path)) as store:
        define_classes()
    kept = marshal.loads(path.read_bytes()[len(MAGIC_NUMBER) :])
    assert set(kept) == set(store.compiled) and not set(kept) & set(stale)


def test_exec_is_only_shadowed_inside_the_block_even_when_it_fails(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        with reusing_compiled_code(str(tmp_path / "m.marshal")):
            assert "exec" in vars(dataclasses)
            raise RuntimeError("boom")
    assert "exec" not in vars(dataclasses)


def test_without_a_file_nothing_is_shadowed_or_written(tmp_path: Path) -> None:
    with reusing_compiled_code(None) as methods:
        assert "exec" not in vars(dataclasses)
        define_classes()
    assert methods.reused == 0 and not list(tmp_path.iterdir())


def test_classes_of_other_packages_pass_through_and_the_file_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "methods.marshal"
    path.write_bytes(b"not read")
    with reusing_code_of(str(path), frozenset({"leaklint"})) as methods:
        classes = define_classes()
    assert methods.reused == 0 and not methods.compiled
    assert path.read_bytes() == b"not read"
    assert behaviour(*classes) == behaviour(*define_classes())


def test_an_inner_block_leaves_the_work_to_the_outer_one(tmp_path: Path) -> None:
    with reusing_compiled_code(str(tmp_path / "outer.marshal")) as outer:
        with reusing_compiled_code(str(tmp_path / "inner.marshal")) as inner:
            define_classes()
        assert "exec" in vars(dataclasses)
    assert outer.compiled and not inner.compiled
    assert [p.name for p in tmp_path.iterdir()] == ["outer.marshal"]


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage", b"\x00" * 64, "magic, then a damaged payload", "magic, then a list", "magic, then a dict of ints"],
)
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(tmp_path: Path, content: bytes | str) -> None:
    import marshal
    from importlib.util import MAGIC_NUMBER

    if content == "magic, then a damaged payload":
        content = MAGIC_NUMBER + marshal.dumps({"x": compile("1", "<string>", "exec")})[:-7]
    elif content == "magic, then a list":
        content = MAGIC_NUMBER + marshal.dumps([1, 2])
    elif content == "magic, then a dict of ints":
        content = MAGIC_NUMBER + marshal.dumps({"text": 1})
    path = tmp_path / "methods.marshal"
    path.write_bytes(content)
    with reusing_compiled_code(str(path)) as methods:
        classes = define_classes()
    assert methods.reused == 0 and methods.compiled
    assert behaviour(*classes) == behaviour(*define_classes())
    assert path.read_bytes().startswith(MAGIC_NUMBER) and path.read_bytes() != content


def test_a_file_from_another_interpreter_is_not_loaded(tmp_path: Path) -> None:
    """Code objects are only valid for the bytecode they were compiled for (the magic number)."""
    import marshal

    path = tmp_path / "methods.marshal"
    with reusing_compiled_code(str(path)):
        define_classes()
    stored = path.read_bytes()
    path.write_bytes(b"\x00\x00\r\n" + stored[4:])
    with reusing_compiled_code(str(path)) as methods:
        define_classes()
    assert methods.reused == 0
    assert marshal.loads(path.read_bytes()[4:])  # rewritten for this interpreter


def test_a_directory_that_cannot_be_written_costs_only_the_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the directory should be")
    with reusing_compiled_code(str(blocker / "sub" / "methods.marshal")) as methods:
        classes = define_classes()
    assert methods.compiled
    assert behaviour(*classes) == behaviour(*define_classes())


def test_where_the_file_lives(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(tmp_path / "codes"))
    assert cache_directory() == str(tmp_path / "codes")
    cache_file = code_cache.cache_file()
    assert cache_file is not None
    name = os.path.basename(cache_file)
    assert sys.implementation.cache_tag in name and "libcst-" in name and cache_file.startswith(str(tmp_path / "codes"))
    for off in ("off", "OFF", "0", "false", "no"):
        monkeypatch.setenv(ENVIRONMENT_VARIABLE, off)
        assert cache_directory() is None and code_cache.cache_file() is None
    monkeypatch.delenv(ENVIRONMENT_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == str(tmp_path / "xdg" / "leaklint")  # beside verify.json


def test_without_a_home_directory_there_is_no_code_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert cache_directory() is None and code_cache.cache_file() is None


def test_a_missing_home_directory_is_not_created(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "gone"))
    assert cache_directory() is None
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_directory() == str(tmp_path / ".cache" / "leaklint")


# What every dataclass method of libcst's classes compiled to, in a fresh process.
_FINGERPRINT = textwrap.dedent(
    """\
    import hashlib, marshal, sys
    from leaklint.code_cache import import_libcst
    libcst = import_libcst()
    digest = hashlib.sha256()
    for name in sorted(dir(libcst)):
        cls = getattr(libcst, name)
        if isinstance(cls, type) and hasattr(cls, "__dataclass_fields__"):
            for method in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
                function = cls.__dict__.get(method)
                code = getattr(function, "__code__", None)
                if code is not None:
                    digest.update(name.encode() + method.encode() + marshal.dumps(code))
    print(digest.hexdigest(), "exec" in vars(sys.modules["dataclasses"]))
    """
)


def _fingerprint(code_cache: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", _FINGERPRINT], env={**os.environ, ENVIRONMENT_VARIABLE: code_cache},
        capture_output=True, text=True, timeout=120, check=True,
    )
    return result.stdout


def test_libcst_gets_the_same_methods_compiled_afresh_stored_and_reused(tmp_path: Path) -> None:
    directory = tmp_path / "codes"
    afresh = _fingerprint("off")
    stored = _fingerprint(str(directory))
    (cache_file,) = directory.iterdir()
    written = cache_file.stat().st_mtime_ns
    reused = _fingerprint(str(directory))
    assert afresh == stored == reused and afresh.endswith("False\n")
    assert cache_file.stat().st_mtime_ns == written  # the second import compiled nothing new


def test_the_command_reports_the_same_with_and_without_the_code_cache(project: Path, tmp_path: Path) -> None:
    (project / "train.py").write_text(LEAKY_LOOP)
    directory = tmp_path / "codes"
    without = run_leaklint("train.py", "--no-cache", cwd=project, env={ENVIRONMENT_VARIABLE: "off"})
    first = run_leaklint("train.py", "--no-cache", cwd=project, env={ENVIRONMENT_VARIABLE: str(directory)})
    (cache_file,) = directory.iterdir()
    written = cache_file.stat().st_mtime_ns
    second = run_leaklint("train.py", "--no-cache", cwd=project, env={ENVIRONMENT_VARIABLE: str(directory)})
    assert without.returncode == first.returncode == second.returncode == 1
    assert text(without) == text(first) == text(second)
    assert "LL101" in text(first)[0]
    assert cache_file.stat().st_mtime_ns == written  # everything the second run defined was stored


def test_the_command_keeps_leaklint_s_own_classes_and_functions(project: Path, tmp_path: Path) -> None:
    """Not only libcst's import: the command's block also stores the code of leaklint's
    dataclasses (``Finding``) and of the functions it writes per node class."""
    import marshal
    from importlib.util import MAGIC_NUMBER

    (project / "train.py").write_text(LEAKY_LOOP)
    directory = tmp_path / "codes"
    run_leaklint("train.py", "--no-cache", cwd=project, env={ENVIRONMENT_VARIABLE: str(directory)})
    (cache_file,) = directory.iterdir()
    texts = list(marshal.loads(cache_file.read_bytes()[len(MAGIC_NUMBER) :]))
    assert any("statement_start" in t and "__init__" in t for t in texts)  # Finding.__init__
    assert any(t.startswith("def convert(node):") for t in texts)  # a mirror converter
    assert any(t.startswith("def children(node):") for t in texts)  # a gate lister


def test_version_does_not_read_the_file(tmp_path: Path) -> None:
    """The file is read on the first lookup only: ``--version`` defines no class of leaklint's."""
    probe = textwrap.dedent(
        """\
        import sys
        from leaklint import code_cache
        def refuse(path):
            raise SystemExit("the code cache was read")
        code_cache._load = refuse
        from leaklint.cli import run
        sys.argv = ["leaklint", "--version"]
        run()
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], env={**os.environ, ENVIRONMENT_VARIABLE: str(tmp_path)},
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("leaklint ")
