"""bench/realcode/: the pinned corpus list, assemble.py (from a local mirror and from a clone), the
triage file, and score.py's matching, tables and exit codes, on small corpora built here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

REALCODE = ROOT / "bench" / "realcode"
sys.path.insert(0, str(REALCODE))

from corpus import load_repos  # noqa: E402
from triage import VERDICTS, load_triage  # noqa: E402


def run_script(name: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REALCODE / name), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


# --- the committed corpus list and triage ---------------------------------------------------------


def test_the_corpus_has_at_least_25_pinned_repositories():
    repos = load_repos()
    assert len(repos) >= 25
    assert all(len(repo.commit) == 40 and repo.url.startswith("https://github.com/") for repo in repos)
    assert all(repo.style for repo in repos)


def test_every_triage_entry_has_a_verdict_and_a_reason_and_names_a_corpus_repository():
    names = {repo.name for repo in load_repos()}
    entries = load_triage(REALCODE / "triage.jsonl")
    assert entries
    for entry in entries:
        assert entry.verdict in VERDICTS, entry
        assert entry.reason.strip(), entry
        assert entry.repo in names, entry
        assert entry.pass_ in ("default", "select-all"), entry


def test_every_library_triage_entry_names_a_package_that_bench_corpus_sh_unpacks():
    script = (ROOT / "bench" / "corpus.sh").read_text()
    packages = {line.strip().replace("==", "-") for line in script.split('PACKAGES="')[1].split('"')[0].split()}
    entries = load_triage(REALCODE / "triage-libraries.jsonl")
    assert entries
    for entry in entries:
        assert entry.verdict in VERDICTS, entry
        assert entry.reason.strip(), entry
        assert entry.repo in packages, entry
        assert entry.path.startswith(entry.repo + "/"), entry


# --- assemble.py ----------------------------------------------------------------------------------


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str]:
    """A small repository with training code, data and a folder to leave out; returns (path, commit)."""
    source = tmp_path / "upstream"
    (source / "train").mkdir(parents=True)
    (source / "train" / "loop.py").write_text("for x in loader:\n    step(x)\n")
    (source / "train" / "demo.ipynb").write_text(json.dumps({"cells": [
        {"cell_type": "code", "source": ["import torch\n", "x = 1\n"], "metadata": {}, "outputs": []},
        {"cell_type": "markdown", "source": "# title", "metadata": {}},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (source / "train" / "weights.bin").write_bytes(b"\0" * 10)
    (source / "train" / "legacy").mkdir()
    (source / "train" / "legacy" / "old.py").write_text("pass\n")
    (source / "setup.py").write_text("raise SystemExit('never run')\n")
    git("init", "-q", cwd=source)
    git("add", ".", cwd=source)
    git("commit", "-q", "-m", "one", cwd=source)
    commit = git("rev-parse", "HEAD", cwd=source)
    (source / "train" / "later.py").write_text("pass\n")
    git("add", ".", cwd=source)
    git("commit", "-q", "-m", "two", cwd=source)
    return source, commit


def write_config(path: Path, commit: str, *extra: str) -> Path:
    path.write_text(
        f'[[repo]]\nname = "demo"\nurl = "https://github.com/someone/demo"\ncommit = "{commit}"\n'
        'style = "a test repository"\npaths = ["train"]\nexclude = ["train/legacy"]\n' + "".join(extra)
    )
    return path


def test_assemble_reads_the_pinned_commit_from_a_mirror_and_skips_finished_repositories(tmp_path, upstream):
    source, commit = upstream
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(mirrors / "someone+demo" / "repo")], check=True)
    config = write_config(tmp_path / "repos.toml", commit)
    corpus = tmp_path / "corpus"

    first = run_script("assemble.py", str(corpus), "--mirror-root", str(mirrors), "--config", str(config))
    assert first.returncode == 0, first.stderr
    files = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file())
    assert files == ["demo/.complete", "demo/train/demo.ipynb", "demo/train/loop.py"]
    assert (corpus / "demo" / ".complete").read_text().strip() == commit
    assert "2 in .py files" in first.stdout and "2 in notebooks' code cells" in first.stdout
    assert "built" in first.stdout

    again = run_script("assemble.py", str(corpus), "--mirror-root", str(mirrors), "--config", str(config))
    assert again.returncode == 0 and "present" in again.stdout


def test_assemble_clones_like_a_user_and_gets_the_same_files(tmp_path, upstream):
    source, commit = upstream
    config = write_config(tmp_path / "repos.toml", commit)
    # Send the GitHub address to the local repository, as a user's clone would fetch it.
    redirect = {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": f"url.file://{source}.insteadOf",
                "GIT_CONFIG_VALUE_0": "https://github.com/someone/demo",
                "GIT_CONFIG_KEY_1": "uploadpack.allowFilter", "GIT_CONFIG_VALUE_1": "true"}
    result = run_script("assemble.py", str(tmp_path / "corpus"), "--config", str(config), env=redirect)
    assert result.returncode == 0, result.stderr
    files = sorted(p.relative_to(tmp_path / "corpus").as_posix() for p in (tmp_path / "corpus").rglob("*") if p.is_file())
    assert files == ["demo/.complete", "demo/train/demo.ipynb", "demo/train/loop.py"]
    assert not list(tmp_path.joinpath("corpus").glob(".clone-*")), "the scratch clone is removed"


def test_a_repository_that_cannot_be_had_is_one_line_and_the_others_go_on(tmp_path, upstream):
    source, commit = upstream
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(mirrors / "someone+demo" / "repo")], check=True)
    config = write_config(tmp_path / "repos.toml", commit,
                          f'\n[[repo]]\nname = "gone"\nurl = "https://github.com/someone/gone"\ncommit = "{commit}"\nstyle = "x"\n',
                          f'\n[[repo]]\nname = "repinned"\nurl = "https://github.com/someone/demo"\ncommit = "{"0" * 40}"\nstyle = "x"\n')
    result = run_script("assemble.py", str(tmp_path / "corpus"), "--mirror-root", str(mirrors), "--config", str(config))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    errors = result.stderr.strip().splitlines()
    assert errors[0] == f"assemble.py: gone: no mirror of someone/gone under {mirrors} (looked for someone+gone/repo)"
    assert errors[1].startswith(f"assemble.py: repinned: commit {'0' * 40} is not in ")
    assert (tmp_path / "corpus" / "demo" / ".complete").exists()
    assert not (tmp_path / "corpus" / "gone").exists() and not list((tmp_path / "corpus").glob(".partial-*"))


@pytest.mark.parametrize("change, message", [
    ('commit = "abc"', "the commit must be 40 lowercase hex digits"),
    ('url = "https://example.com/x/y"', "the url must be https://github.com/OWNER/NAME"),
    ('paths = ["../escape"]', "must be a plain relative path"),
])
def test_a_bad_repos_toml_is_named_in_one_line_with_exit_2(tmp_path, change, message):
    key = change.split(" =")[0]
    lines = [line for line in write_config(tmp_path / "x.toml", "a" * 40).read_text().splitlines() if not line.startswith(key + " =")]
    config = tmp_path / "repos.toml"
    config.write_text("\n".join([*lines, change]) + "\n")
    result = run_script("assemble.py", str(tmp_path / "corpus"), "--config", str(config))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr and "Traceback" not in result.stderr


def test_assemble_refuses_a_corpus_folder_inside_the_checkout():
    result = run_script("assemble.py", str(ROOT / "bench" / "corpus-here"))
    assert result.returncode == 2 and "inside the leaklint checkout" in result.stderr
    assert not (ROOT / "bench" / "corpus-here").exists()


# --- score.py -------------------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A corpus of one repository with three flagged lines (findings are given as saved JSON)."""
    root = tmp_path / "corpus"
    (root / "demo").mkdir(parents=True)
    (root / "demo" / "train.py").write_text(
        "import torch\n\n\ndef evaluate(model, x):\n    return model(x)\n\n\nlosses.append(loss)\ntotal += loss\n"
    )
    return root


def finding(line: int, code: str, message: str = "m") -> dict:
    return {"path": "demo/train.py", "line": line, "column": 5, "code": code, "confidence": "medium", "message": message}


def triage_line(line: int, code: str, snippet: str, verdict: str, reason: str = "because") -> str:
    return json.dumps({"repo": "demo", "path": "demo/train.py", "line": line, "code": code, "snippet": snippet,
                       "verdict": verdict, "reason": reason, "confidence": "medium", "pass": "default"}) + "\n"


def test_score_matches_by_snippet_across_line_shifts_and_reports_the_untriaged(tmp_path, corpus):
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([finding(5, "LL201"), finding(8, "LL102"), finding(9, "LL101")]))
    triage = tmp_path / "triage.jsonl"
    triage.write_text(
        triage_line(3, "LL201", "return model(x)", "false", "evaluate() is only called under no_grad")  # shifted by 2
        + triage_line(8, "LL102", "losses.append(loss)", "true")
        + triage_line(40, "LL104", "loss.backward(retain_graph=True)", "true")  # matches nothing: stale
    )
    untriaged = tmp_path / "todo.jsonl"
    result = run_script("score.py", str(corpus), "--findings", str(findings), "--triage", str(triage),
                        "--write-untriaged", str(untriaged))
    assert result.returncode == 1, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line[:2] in ("LL", "ov")}
    assert rows["LL201"][1:6] == ["1", "0", "1", "0", "0"] and rows["LL201"][6] == "0.00"
    assert rows["LL102"][1:7] == ["1", "1", "0", "0", "0", "1.00"]
    assert rows["overall"][1:7] == ["3", "1", "1", "0", "1", "0.50"]
    assert "demo/train.py:9:5: LL101 [medium] m" in result.stdout
    assert "demo/train.py:40: LL104 was true: loss.backward(retain_graph=True)" in result.stdout
    record = json.loads(untriaged.read_text())
    assert record["snippet"] == "total += loss" and record["verdict"] == "" and record["line"] == 9


def test_score_counts_debatable_apart_and_exits_0_when_everything_is_triaged(tmp_path, corpus):
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([finding(8, "LL102"), finding(9, "LL101")]))
    triage = tmp_path / "triage.jsonl"
    triage.write_text(triage_line(8, "LL102", "losses.append(loss)", "true") + triage_line(9, "LL101", "total += loss", "debatable"))
    result = run_script("score.py", str(corpus), "--findings", str(findings), "--triage", str(triage))
    assert result.returncode == 0, result.stdout + result.stderr
    overall = next(line.split() for line in result.stdout.splitlines() if line.startswith("overall"))
    assert overall[1:8] == ["2", "1", "0", "1", "0", "1.00", "0.50"]


def test_two_findings_on_one_line_keep_their_own_verdicts(tmp_path, corpus):
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([finding(8, "LL102", "about a"), finding(8, "LL102", "about b")]))
    lines = [json.loads(triage_line(8, "LL102", "losses.append(loss)", verdict)) for verdict in ("false", "true")]
    lines[0]["message"], lines[1]["message"] = "about b", "about a"
    triage = tmp_path / "triage.jsonl"
    triage.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run_script("score.py", str(corpus), "--findings", str(findings), "--triage", str(triage))
    assert result.returncode == 0
    overall = next(line.split() for line in result.stdout.splitlines() if line.startswith("overall"))
    assert overall[1:4] == ["2", "1", "1"]


@pytest.mark.parametrize("bad, message", [
    ("{not json", "not valid JSON"),
    (triage_line(8, "LL102", "x", "maybe"), "'verdict' must be one of true, false, debatable"),
    (triage_line(8, "LL102", "x", "true", reason=""), "needs a one-line reason"),
])
def test_a_bad_triage_line_is_named_with_exit_2(tmp_path, corpus, bad, message):
    triage = tmp_path / "triage.jsonl"
    triage.write_text(triage_line(8, "LL102", "losses.append(loss)", "true") + bad + "\n")
    findings = tmp_path / "findings.json"
    findings.write_text("[]")
    result = run_script("score.py", str(corpus), "--findings", str(findings), "--triage", str(triage))
    assert result.returncode == 2
    assert result.stderr.startswith(f"score.py: {triage}:2: ") and message in result.stderr
    assert "Traceback" not in result.stderr


def test_score_runs_leaklint_on_the_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "demo").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures" / "leaky_amp_trainer.py", corpus / "demo" / "trainer.py")
    todo = tmp_path / "todo.jsonl"
    first = run_script("score.py", str(corpus), "--triage", str(tmp_path / "none.jsonl"), "--jobs", "1", "--write-untriaged", str(todo))
    assert first.returncode == 1, first.stderr
    records = [json.loads(line) for line in todo.read_text().splitlines()]
    assert records and all(record["path"].startswith("demo/trainer.py") for record in records)
    for record in records:
        record.update(verdict="true", reason="the fixture leaks on purpose")
    triage = tmp_path / "triage.jsonl"
    triage.write_text("".join(json.dumps(record) + "\n" for record in records))
    second = run_script("score.py", str(corpus), "--triage", str(triage), "--jobs", "1")
    assert second.returncode == 0, second.stdout + second.stderr
    overall = next(line.split() for line in second.stdout.splitlines() if line.startswith("overall"))
    assert overall[1] == str(len(records)) and overall[5] == "0" and overall[6] == "1.00"


def _realcode_score():
    """bench/realcode/score.py, imported by path under its own name: bench/leaks has a score.py
    too, and a plain ``import score`` would take whichever was imported first."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_realcode_score", REALCODE / "score.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_realcode_score"] = module
    spec.loader.exec_module(module)
    return module


def test_a_notebook_cell_with_a_syntax_error_leaves_out_only_that_cell(tmp_path):
    Skipped = _realcode_score().Skipped

    corpus = tmp_path / "corpus"
    (corpus / "demo").mkdir(parents=True)
    cells = [{"cell_type": "code", "source": "a = 1\nb = 2\n"}, {"cell_type": "code", "source": "print 'py2'\n"}]
    (corpus / "demo" / "book.ipynb").write_text(json.dumps({"cells": cells}))
    (corpus / "demo" / "old.py").write_text("print 'py2'\nx = 1\n")
    errors = [(str(corpus / "demo" / "book.ipynb"), "syntax error at cell 2:1:7: Missing parentheses"),
              (str(corpus / "demo" / "old.py"), "syntax error at 1:1: Missing parentheses"),
              (str(corpus / "demo" / "old.py"), "syntax error at 1:1: Missing parentheses")]
    skipped = Skipped.from_errors(errors, corpus)
    assert skipped.files == {"demo/old.py"} and skipped.cells == {"demo/book.ipynb": {2}}
    assert skipped.lines(corpus) == 2 + 1
