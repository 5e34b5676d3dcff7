"""The result cache: hits skip the work, anything that could change a result misses, and a broken
or unwritable cache never changes what is reported."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
from pathlib import Path

import pytest

import leaklint.cache as cache_module
import leaklint.engine as engine
from conftest import CLEAN_LOOP, LEAKY_LOOP, ROOT, run_leaklint, text
from leaklint.cache import CACHE_FORMAT, ResultCache, open_cache, run_fingerprint
from leaklint.config import Settings
from leaklint.findings import (
    Applicability,
    Confidence,
    ErrorKind,
    FileError,
    Finding,
    Fix,
    Severity,
    TextEdit,
)
from leaklint.registry import all_rules

FIXTURES = ROOT / "fixtures"


def rules(settings: Settings) -> list:
    known = all_rules()
    return [known[code] for code in sorted(settings.enabled_codes(known))]


def lint(paths, settings, cache, **kwargs):
    result, texts = engine.lint_paths([str(p) for p in paths], rules(settings), settings, cache=cache, **kwargs)
    return result


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(root=tmp_path, cache_dir=tmp_path / "cache")


def write(path: Path, source: str) -> Path:
    path.write_text(source)
    return path


# --- hits and misses ---------------------------------------------------------------------------
def test_a_second_run_is_answered_from_the_cache(tmp_path, settings, monkeypatch):
    leaky = write(tmp_path / "train.py", LEAKY_LOOP)
    cache = open_cache(settings, rules(settings))
    first = lint([leaky], settings, cache)
    assert [f.code for f in first.findings] == ["LL101"]

    def refuse(*args, **kwargs):
        raise AssertionError("linted although the result was cached")

    monkeypatch.setattr(engine, "lint_file", refuse)
    assert lint([leaky], settings, open_cache(settings, rules(settings))) == first


def test_changed_content_misses(tmp_path, settings):
    path = write(tmp_path / "train.py", LEAKY_LOOP)
    cache = open_cache(settings, rules(settings))
    assert lint([path], settings, cache).findings
    write(path, CLEAN_LOOP)
    assert lint([path], settings, cache).findings == ()


def test_same_content_under_another_name_misses(tmp_path, settings):
    """Findings carry their path: a copy must not be reported under the original's name."""
    write(tmp_path / "a.py", LEAKY_LOOP)
    write(tmp_path / "b.py", LEAKY_LOOP)
    cache = open_cache(settings, rules(settings))
    assert {f.path for f in lint([tmp_path / "a.py"], settings, cache).findings} == {str(tmp_path / "a.py")}
    assert {f.path for f in lint([tmp_path / "b.py"], settings, cache).findings} == {str(tmp_path / "b.py")}


@pytest.mark.parametrize(
    "change",
    [
        {"min_confidence": Confidence.HIGH},
        {"max_file_size": 1000},
        {"extend_unsafe_fixes": ("LL1",)},
        {"ignore": ("LL101",)},
        {"select": ("LL2",)},
    ],
    ids=lambda change: next(iter(change)),
)
def test_settings_that_change_results_change_the_fingerprint(settings, change):
    changed = dataclasses.replace(settings, **change)
    assert run_fingerprint(settings, rules(settings)) != run_fingerprint(changed, rules(changed))


@pytest.mark.parametrize(
    "change",
    [{"exclude": ("x",)}, {"respect_gitignore": False}, {"cache_dir": Path("elsewhere")}, {"per_file_ignores": (("*.md", ("LL1",)),)}],
    ids=lambda change: next(iter(change)),
)
def test_settings_that_only_choose_files_keep_the_fingerprint(settings, change):
    changed = dataclasses.replace(settings, **change)
    assert run_fingerprint(settings, rules(settings)) == run_fingerprint(changed, rules(changed))


def test_min_confidence_change_is_honoured(tmp_path, settings):
    source = LEAKY_LOOP.replace("criterion(model(x), y)", "model(x)").replace("loss.backward()", "pass")
    path = write(tmp_path / "train.py", source)
    low = dataclasses.replace(settings, min_confidence=Confidence.LOW)
    high = dataclasses.replace(settings, min_confidence=Confidence.HIGH)
    found = lint([path], low, open_cache(low, rules(low))).findings
    assert found and all(f.confidence < Confidence.HIGH for f in found)
    assert lint([path], high, open_cache(high, rules(high))).findings == ()


def test_per_file_ignores_of_the_path_are_in_the_key(tmp_path, settings):
    path = write(tmp_path / "train.py", LEAKY_LOOP)
    assert lint([path], settings, open_cache(settings, rules(settings))).findings
    ignoring = dataclasses.replace(settings, per_file_ignores=(("train.py", ("LL101",)),))
    assert lint([path], ignoring, open_cache(ignoring, rules(ignoring))).findings == ()


def test_a_new_version_misses(tmp_path, settings, monkeypatch):
    path = write(tmp_path / "train.py", LEAKY_LOOP)
    before = open_cache(settings, rules(settings))
    lint([path], settings, before)
    monkeypatch.setattr(cache_module, "__version__", "99.0")
    after = open_cache(settings, rules(settings))
    assert after.fingerprint != before.fingerprint


def test_editing_leaklint_code_misses(tmp_path, settings):
    """An editable install: same version, changed rule module."""
    module = Path(cache_module.__file__).parent / "findings.py"
    before = run_fingerprint(settings, rules(settings))
    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    try:
        assert run_fingerprint(settings, rules(settings)) != before
    finally:
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))


# --- what is stored ----------------------------------------------------------------------------
def test_findings_with_fixes_and_errors_round_trip(tmp_path):
    cache = ResultCache(tmp_path, "fingerprint")
    fix = Fix("use .item()", Applicability.UNSAFE, (TextEdit(10, 14, "loss.item()", 3, 5, 3, 9),))
    finding = Finding("a.py", 3, 5, 3, 9, "LL101", "loss-accumulation", Severity.LEAK, Confidence.HIGH,
                      "message", "help", statement_start=3, statement_end=4, fix=fix)
    error = FileError("a.py", ErrorKind.INTERNAL, "internal error in rule LL102", "LL102")
    assert cache.store("k" * 40, [finding], [error])
    loaded = cache.load("k" * 40)
    assert loaded.findings == (finding,) and loaded.findings[0].fix == fix
    assert loaded.findings[0].statement_end == 4  # not part of equality: compare it by hand
    assert loaded.errors == (error,)


def test_a_notebook_finding_keeps_its_cell_and_its_edits_cells(tmp_path):
    cache = ResultCache(tmp_path, "fingerprint")
    edits = (TextEdit(0, 0, "import torch\n", 3, 1, 3, 1, cell=2), TextEdit(40, 44, "loss.detach()", 2, 9, 2, 13, cell=5))
    finding = Finding("nb.ipynb", 2, 9, 2, 13, "LL101", "loss-accumulation", Severity.LEAK, Confidence.HIGH,
                      "message", "help", fix=Fix("detach", Applicability.SAFE, edits), cell=5)
    assert cache.store("n" * 40, [finding], [])
    loaded = cache.load("n" * 40).findings[0]
    assert loaded == finding and loaded.cell == 5
    assert [edit.cell for edit in loaded.fix.edits] == [2, 5]


def test_syntax_errors_come_back_from_the_cache(tmp_path, settings, monkeypatch):
    broken = write(tmp_path / "broken.py", "def f(:\n")
    first = lint([broken], settings, open_cache(settings, rules(settings)))
    assert [e.kind for e in first.errors] == [ErrorKind.SYNTAX]
    monkeypatch.setattr(engine, "lint_file", lambda *a, **k: pytest.fail("linted again"))
    assert lint([broken], settings, open_cache(settings, rules(settings))) == first


def test_read_errors_and_refusals_are_not_cached(tmp_path):
    cache = ResultCache(tmp_path, "fingerprint")
    for kind in (ErrorKind.IO, ErrorKind.NOT_FOUND, ErrorKind.TOO_LARGE):
        assert not cache.store("a" * 40, [], [FileError("a.py", kind, "reason")])
    assert not list(tmp_path.rglob("*.json"))


def test_source_text_is_available_on_a_hit(tmp_path, settings):
    path = write(tmp_path / "train.py", LEAKY_LOOP)
    engine.lint_paths([str(path)], rules(settings), settings, cache=open_cache(settings, rules(settings)))
    _, texts = engine.lint_paths([str(path)], rules(settings), settings, keep_text=True, cache=open_cache(settings, rules(settings)))
    assert texts == {str(path): LEAKY_LOOP}


# --- a broken or unusable cache ----------------------------------------------------------------
@pytest.mark.parametrize("garbage", [b"", b"{", b"\xff\xfe", b"[]", b'{"key": 1}', b"null"])
def test_a_corrupted_entry_is_a_miss(tmp_path, settings, garbage):
    path = write(tmp_path / "train.py", LEAKY_LOOP)
    cache = open_cache(settings, rules(settings))
    first = lint([path], settings, cache)
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 1
    entries[0].write_bytes(garbage)
    assert lint([path], settings, cache) == first
    assert json.loads(entries[0].read_bytes())["findings"], "the entry is rewritten"


def _resealed(entry: dict, change) -> dict:
    """``entry`` changed by ``change``, with a checksum that matches again (a hand edit)."""
    from leaklint.cache import _checksum

    change(entry)
    entry["checksum"] = _checksum(entry)
    return entry


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e["findings"][0].update(line="14"),
        lambda e: e["findings"][0].update(line=True),
        lambda e: e["findings"][0].update(column=0),
        lambda e: e["findings"][0].update(severity="catastrophic"),
        lambda e: e["findings"][0].update(message=None),
        lambda e: e["findings"][0].update(extra=1),
        lambda e: e["findings"][0]["fix"]["edits"][0].update(start=-1),
        lambda e: e["errors"][0].update(rule=7),
        lambda e: e.update(findings={}),
    ],
)
def test_an_entry_with_a_field_of_the_wrong_type_is_a_miss(tmp_path, change):
    cache = ResultCache(tmp_path, "fingerprint")
    fix = Fix("detach", Applicability.SAFE, (TextEdit(10, 14, "loss.detach()", 3, 5, 3, 9),))
    finding = Finding("a.py", 3, 5, 3, 9, "LL101", "loss-accumulation", Severity.LEAK, Confidence.HIGH, "m", "h", fix=fix)
    assert cache.store("k" * 40, [finding], [FileError("a.py", ErrorKind.INTERNAL, "boom", "LL102")])
    [entry] = tmp_path.rglob("*.json")
    entry.write_text(json.dumps(_resealed(json.loads(entry.read_bytes()), change)))
    assert cache.load("k" * 40) is None


def test_an_entry_whose_checksum_does_not_match_is_a_miss(tmp_path):
    cache = ResultCache(tmp_path, "fingerprint")
    finding = Finding("a.py", 3, 5, 3, 9, "LL101", "loss-accumulation", Severity.LEAK, Confidence.HIGH, "message", "h")
    assert cache.store("k" * 40, [finding], [])
    [entry] = tmp_path.rglob("*.json")
    entry.write_bytes(entry.read_bytes().replace(b'"message"', b'"massage"'))
    assert cache.load("k" * 40) is None


def test_an_entry_about_another_file_is_a_miss(tmp_path):
    cache = ResultCache(tmp_path, "fingerprint")
    finding = Finding("a.py", 3, 5, 3, 9, "LL101", "loss-accumulation", Severity.LEAK, Confidence.HIGH, "m", "h")
    assert cache.store("k" * 40, [finding], [])
    assert cache.load("k" * 40, "a.py") is not None
    assert cache.load("k" * 40, "b.py") is None


def test_an_entry_of_another_key_is_a_miss(tmp_path):
    """An entry copied or renamed under another key (a broken sync, a hand edit) is not trusted."""
    cache = ResultCache(tmp_path, "fingerprint")
    cache.store("a" * 40, [], [])
    moved = tmp_path / f"v{CACHE_FORMAT}" / "bb" / ("b" * 40 + ".json")
    moved.parent.mkdir(parents=True)
    os.replace(next(tmp_path.rglob("*.json")), moved)
    assert cache.load("b" * 40) is None


def test_an_unwritable_cache_dir_disables_caching_with_one_warning(tmp_path, capsys):
    blocker = write(tmp_path / "not-a-directory", "")
    settings = Settings(root=tmp_path, cache_dir=blocker / "cache")
    assert open_cache(settings, rules(settings)) is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("leaklint: warning: cache disabled: cannot write")


def _hammer(directory: str, key: str, rounds: int, size: int) -> None:
    cache = ResultCache(Path(directory), "fingerprint")
    finding = Finding("a.py", 1, 1, 1, 2, "LL101", "loss-accumulation", Severity.LEAK, Confidence.HIGH, "m" * size, "h")
    for _ in range(rounds):
        assert cache.store(key, [finding], [])


def test_concurrent_writers_never_leave_a_partial_entry(tmp_path):
    key = "c" * 40
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_hammer, args=(str(tmp_path), key, 150, size)) for size in (10, 50_000, 200_000)]
    for writer in writers:
        writer.start()
    cache = ResultCache(tmp_path, "fingerprint")
    seen = 0
    while any(w.is_alive() for w in writers):
        loaded = cache.load(key)
        if loaded is not None:
            assert len(loaded.findings[0].message) in (10, 50_000, 200_000)
            seen += 1
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert cache.load(key) is not None
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")], "temporary files left behind"


# --- end to end --------------------------------------------------------------------------------
def json_report(*args, cwd):
    result = run_leaklint("--select", "ALL", "--min-confidence", "low", "--format", "json", *args, cwd=cwd)
    out, err = text(result)
    return result.returncode, json.loads(out), err


def test_fixtures_report_the_same_with_and_without_the_cache(tmp_path):
    cache_dir = tmp_path / "cache"
    plain = json_report("--no-cache", str(FIXTURES), cwd=tmp_path)
    cold = json_report("--cache-dir", str(cache_dir), str(FIXTURES), cwd=tmp_path)
    warm = json_report("--cache-dir", str(cache_dir), str(FIXTURES), cwd=tmp_path)
    assert plain == cold == warm
    assert plain[1], "the fixtures have findings"
    assert any(finding.get("cell") for finding in plain[1]), "the fixtures include a notebook"
    linted = [*FIXTURES.rglob("*.py"), *FIXTURES.rglob("*.ipynb")]
    entries = list(cache_dir.rglob("*.json"))
    summaries = [entry for entry in entries if "summaries" in entry.parts]
    assert len(entries) - len(summaries) == len(linted)  # one result per file
    assert summaries, "the project fixtures' helpers are summarized beside the results"


def test_the_default_cache_lives_at_the_project_root_with_a_gitignore(project):
    (project / "src").mkdir()
    write(project / "src" / "train.py", LEAKY_LOOP)
    result = run_leaklint("train.py", cwd=project / "src")
    assert result.returncode == 1
    cache_dir = project / ".leaklint_cache"
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert list(cache_dir.rglob("*.json"))


def test_cache_dir_from_the_config_is_relative_to_it(project):
    (project / "pyproject.toml").write_text('[tool.leaklint]\ncache-dir = "build/lint-cache"\n')
    write(project / "train.py", LEAKY_LOOP)
    assert run_leaklint("train.py", cwd=project).returncode == 1
    assert list((project / "build" / "lint-cache").rglob("*.json"))
    assert not (project / ".leaklint_cache").exists()


@pytest.mark.parametrize("how", [("--no-cache",), ()], ids=["flag", "env"])
def test_no_cache_neither_reads_nor_writes(project, how):
    write(project / "train.py", LEAKY_LOOP)
    env = {} if how else {"LEAKLINT_NO_CACHE": "1"}
    result = run_leaklint(*how, "train.py", cwd=project, env=env)
    assert result.returncode == 1
    assert not (project / ".leaklint_cache").exists()


def test_an_unwritable_cache_dir_still_lints(project):
    write(project / "blocker", "")
    write(project / "train.py", LEAKY_LOOP)
    result = run_leaklint("--cache-dir", "blocker/cache", "train.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 1 and "train.py:10:9: LL101" in out
    assert err.startswith("leaklint: warning: cache disabled") and err.count("\n") == 1


def test_two_runs_at_once_agree(tmp_path):
    import subprocess
    import sys

    cache_dir = tmp_path / "cache"
    command = [sys.executable, "-m", "leaklint", "--select", "ALL", "--format", "json", "--jobs", "1", "--cache-dir", str(cache_dir), str(FIXTURES)]
    env = {**os.environ, "NO_COLOR": "1"}
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path) for _ in range(3)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 1 for run in runs), [o[1] for o in outputs]
    assert len({out for out, _ in outputs}) == 1
    assert all(err == b"" for _, err in outputs)
