"""Jupyter notebooks (``.ipynb``), through the command line as a user runs it.

A notebook's code cells are one program (a model in cell 2, its leaky loop in cell 4); findings
name the cell and the line within it in every format; IPython syntax is masked, not reported;
``--fix`` rewrites only the changed cells' sources and keeps every other byte of the file.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, run_leaklint, text

from leaklint.findings import Applicability, Confidence, Finding, Fix, Severity, TextEdit
from leaklint.magics import mask_ipython, restore_line
from leaklint.notebook import Notebook, NotebookError, Program

SARIF_SCHEMA = ROOT.parent / "shared/data/sarif-schema-2.1.0.json"

IMPORTS = "import torch\nfrom torch import nn"
MODEL = textwrap.dedent(
    """\
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()"""
)
LEAKY_LOOP = textwrap.dedent(
    """\
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss"""
)  # the finding: line 7, column 5
EVALUATE = textwrap.dedent(
    """\
    def evaluate(model, loader):
        model.eval()
        correct = 0
        for x, y in loader:
            out = model(x)
            correct += (out.argmax(1) == y).sum().item()
        return correct"""
)  # LL201 at line 5, column 15
STREAM_OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["epoch 0: 2.30\n", "CPU times: user 1 s\n"]}
IMAGE_OUTPUT = {
    "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n", "text/plain": ["<Figure size 640x480 with 1 Axes>"]},
    "metadata": {"needs_background": "light"},
    "output_type": "display_data",
}


def code(source: str, *, outputs: list[dict[str, Any]] | None = None, count: int | None = None, as_string: bool = False) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {},
        "outputs": outputs or [],
        "source": source if as_string else source.splitlines(keepends=True),
    }


def markdown(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": source.splitlines(keepends=True)}


def notebook(*cells: dict[str, Any] | str, language: str = "python", indent: int | None = 1, ensure_ascii: bool = False, sort_keys: bool = True, trailing_newline: bool = True) -> str:
    """A notebook's JSON as Jupyter writes it (indent 1, keys sorted, UTF-8 as is, final newline)
    unless told otherwise; a plain string is a code cell."""
    data = {
        "cells": [code(cell) if isinstance(cell, str) else cell for cell in cells],
        "metadata": {
            "kernelspec": {"display_name": language.title(), "language": language, "name": language},
            "language_info": {"name": language},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    dumped = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys)
    return dumped + "\n" if trailing_newline else dumped


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def lint_json(*args: str, cwd: Path) -> tuple[int, list[dict[str, Any]], str]:
    result = run_leaklint("--no-cache", "--format", "json", *args, cwd=cwd)
    out, err = text(result)
    return result.returncode, json.loads(out), err


def cells_of(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def apply_edit(source: str, edit: dict[str, Any]) -> str:
    """A JSON fix edit applied to a cell's source by its lines and columns."""
    lines = source.splitlines(keepends=True) + [""]
    offset = lambda where: sum(len(line) for line in lines[: where["line"] - 1]) + where["column"] - 1  # noqa: E731
    return source[: offset(edit["location"])] + edit["content"] + source[offset(edit["end_location"]) :]


# --- finding notebooks ----------------------------------------------------------------------------
def test_a_directory_walk_lints_notebooks_next_to_python_files(project: Path) -> None:
    write(project / "notebooks" / "train.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP))
    write(project / "train.py", f"{IMPORTS}\n{MODEL}\n{LEAKY_LOOP}\n")
    result = run_leaklint("--no-cache", ".", cwd=project)
    out, err = text(result)
    assert result.returncode == 1, err
    assert "notebooks/train.ipynb:cell 3:7:5: LL101 [leak, high confidence]" in out
    assert "train.py:12:5: LL101 [leak, high confidence]" in out
    assert "in 2 files" in out


def test_jupyter_checkpoints_excludes_and_gitignore_keep_notebooks_out(project: Path) -> None:
    leaky = notebook(IMPORTS, MODEL, LEAKY_LOOP)
    write(project / ".ipynb_checkpoints" / "train-checkpoint.ipynb", leaky)
    write(project / "scratch" / "draft.ipynb", leaky)
    write(project / "generated" / "out.ipynb", leaky)
    write(project / ".gitignore", "generated/\n")
    (project / ".git").mkdir()
    write(project / "pyproject.toml", '[tool.leaklint]\nextend-exclude = ["scratch/*.ipynb"]\n')
    result = run_leaklint("--no-cache", ".", cwd=project)
    assert result.returncode == 0, text(result)
    assert text(result)[0] == "No Python files found: nothing was checked\n"


def test_extend_exclude_turns_notebooks_off(project: Path) -> None:
    write(project / "train.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP))
    write(project / "pyproject.toml", '[tool.leaklint]\nextend-exclude = ["*.ipynb"]\n')
    assert run_leaklint("--no-cache", ".", cwd=project).returncode == 0
    # ...and a notebook named on the command line is linted anyway, as any file is.
    assert run_leaklint("--no-cache", "train.ipynb", cwd=project).returncode == 1


# --- one program, cell by cell --------------------------------------------------------------------
def test_cells_are_one_program_a_caller_in_another_cell_counts(project: Path) -> None:
    """evaluate() in cell 2 is called under no_grad in cell 3 only: no LL201, as in one file."""
    guarded = write(project / "guarded.ipynb", notebook(IMPORTS, EVALUATE, "with torch.no_grad():\n    evaluate(model, loader)"))
    bare = write(project / "bare.ipynb", notebook(IMPORTS, EVALUATE, "evaluate(model, loader)"))
    code_, findings, err = lint_json(guarded.name, bare.name, cwd=project)
    assert code_ == 1, err
    assert [(f["path"], f["cell"], f["line"], f["code"]) for f in findings] == [("bare.ipynb", 2, 5, "LL201")]


def test_markdown_and_raw_cells_are_not_linted_but_are_counted(project: Path) -> None:
    write(project / "nb.ipynb", notebook(
        markdown("# Training\n```python\ntotal_loss += loss\n```"),
        IMPORTS,
        {"cell_type": "raw", "metadata": {}, "source": ["for x in y:\n", "    total += loss.backward()"]},
        MODEL,
        markdown("The loop:"),
        LEAKY_LOOP,
    ))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1, err
    assert [(f["cell"], f["line"], f["column"]) for f in findings] == [(6, 7, 5)]


def test_a_source_may_be_one_string_or_a_list_of_strings(project: Path) -> None:
    write(project / "nb.ipynb", notebook(code(IMPORTS, as_string=True), code(MODEL), code(LEAKY_LOOP, as_string=True)))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1, err
    assert [(f["cell"], f["line"]) for f in findings] == [(3, 7)]


def test_ipython_syntax_is_masked_and_lines_keep_their_numbers(project: Path) -> None:
    magics = textwrap.dedent(
        """\
        !pip install -q torch
        %matplotlib inline
        %load_ext autoreload
        model?
        ?criterion
        nn.Linear??
        files = !ls data
        pip install -U "torch>=2"
        %timeit model(torch.randn(1, 10)) + \\
            model(torch.randn(1, 10))
        for epoch in range(2):
            %time run_epoch()
        """
    )
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, magics + LEAKY_LOOP))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1, err  # and no syntax error
    assert [(f["cell"], f["line"], f["column"], f["code"]) for f in findings] == [(3, 12 + 7, 5, "LL101")]


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1", "%%capture output"])
def test_cell_magics_that_run_python_are_linted(project: Path, magic: str) -> None:
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, f"{magic}\n{LEAKY_LOOP}"))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1, err
    assert [(f["cell"], f["line"]) for f in findings] == [(3, 8)]


@pytest.mark.parametrize("magic", ["%%bash", "%%writefile train.py", "%%html", "%%python3", "%%script bash"])
def test_cells_of_other_languages_are_not_python(project: Path, magic: str) -> None:
    """Their body is shell, HTML, or text written to a file: neither a finding nor a syntax error."""
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, f"{magic}\n{LEAKY_LOOP}\necho <b>done</b> && ls -la"))
    result = run_leaklint("--no-cache", "nb.ipynb", cwd=project)
    assert result.returncode == 0, text(result)


def test_a_notebook_of_another_language_is_not_linted(project: Path) -> None:
    write(project / "analysis.ipynb", notebook("library(ggplot2)\nx <- c(1, 2, 3)", language="R"))
    result = run_leaklint("--no-cache", "analysis.ipynb", cwd=project)
    assert result.returncode == 0, text(result)


def test_a_top_level_await_cell_is_left_out_quietly(project: Path) -> None:
    write(project / "nb.ipynb", notebook(IMPORTS, "data = await fetch_data()", MODEL, LEAKY_LOOP))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1 and err == ""
    assert [(f["cell"], f["line"]) for f in findings] == [(4, 7)]


def test_a_syntax_error_names_its_cell_and_the_other_cells_are_still_linted(project: Path) -> None:
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, "def broken(:\n    pass", LEAKY_LOOP))
    result = run_leaklint("--no-cache", "nb.ipynb", cwd=project)
    out, err = text(result)
    assert result.returncode == 2
    assert err == "nb.ipynb: error: syntax error at cell 3:1:12: invalid syntax\n"
    assert "nb.ipynb:cell 4:7:5: LL101" in out


def test_a_later_cells_future_import_is_not_a_syntax_error(project: Path) -> None:
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, "from __future__ import annotations\n" + LEAKY_LOOP))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1, err
    assert [(f["cell"], f["line"]) for f in findings] == [(3, 8)]


def test_max_file_size_counts_the_code_not_the_outputs(project: Path) -> None:
    big_output = {"name": "stdout", "output_type": "stream", "text": ["x" * 1000 + "\n"] * 3000}
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, code(LEAKY_LOOP, outputs=[big_output])))
    write(project / "pyproject.toml", '[tool.leaklint]\nmax-file-size = "1 MiB"\n')
    assert (project / "nb.ipynb").stat().st_size > 2 * 1024 * 1024
    assert run_leaklint("--no-cache", "nb.ipynb", cwd=project).returncode == 1

    write(project / "pyproject.toml", '[tool.leaklint]\nmax-file-size = "100 B"\n')
    result = run_leaklint("--no-cache", "nb.ipynb", cwd=project)
    assert result.returncode == 2
    assert text(result)[1].startswith("nb.ipynb: error: the code cells hold ")


# --- malformed notebooks ----------------------------------------------------------------------------
MALFORMED = [
    ('{"cells": [', "not valid JSON: Expecting value at line 1, column 12"),
    ("[1, 2]", "not a Jupyter notebook: the top level is a list, not an object"),
    ('{"cells": []}', "not a Jupyter notebook: no 'nbformat' version"),
    ('{"nbformat": 3, "worksheets": []}', "nbformat 3 is not supported"),
    ('{"nbformat": 4, "metadata": {}}', "not a valid notebook: 'cells' is missing"),
    ('{"nbformat": 4, "cells": {"a": 1}}', "not a valid notebook: 'cells' is an object, not a list"),
    ('{"nbformat": 4, "cells": ["x = 1"]}', "not a valid notebook: cell 1 is a string, not an object"),
    ('{"nbformat": 4, "cells": [{"source": "x"}]}', "not a valid notebook: cell 1 has no 'cell_type'"),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}', "the source of cell 1 is a number, not a string or a list of strings"),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["a", null]}]}', "the source of cell 1 is a list, not a string or a list of strings"),
    ("", "not valid JSON: Expecting value at line 1, column 1"),
]


@pytest.mark.parametrize("content, reason", MALFORMED, ids=[reason[:40] for _, reason in MALFORMED])
def test_a_malformed_notebook_is_an_error_and_the_run_goes_on(project: Path, content: str, reason: str) -> None:
    write(project / "bad.ipynb", content)
    write(project / "good.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP))
    for args in (["bad.ipynb", "good.ipynb"], ["--fix", "bad.ipynb", "good.ipynb"]):
        before = (project / "bad.ipynb").read_bytes()
        result = run_leaklint("--no-cache", *args, cwd=project)
        out, err = text(result)
        assert result.returncode == 2
        assert err.count("\n") == 1 and err.startswith("bad.ipynb: error: ") and reason in err, err
        assert "Traceback" not in err
        assert "good.ipynb:cell 3:7:5: LL101" in out or "Fixed 1 finding" in out
        assert (project / "bad.ipynb").read_bytes() == before


# --- how findings are shown -----------------------------------------------------------------------
def test_text_names_the_cell_and_shows_the_cells_line(project: Path) -> None:
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP))
    out, _ = text(run_leaklint("--no-cache", "--show-source", "nb.ipynb", cwd=project))
    assert out.startswith(
        "nb.ipynb:cell 3:7:5: LL101 [leak, high confidence] 'loss' is accumulated into 'total_loss' with its autograd graph"
    )
    assert "7 |     total_loss += loss\n  |     ^^^^^^^^^^^^^^^^^^\n" in out


def test_json_gives_the_cell_and_lines_within_it_for_the_finding_and_each_edit(project: Path) -> None:
    write(project / "nb.ipynb", notebook("from torch import nn", EVALUATE, "evaluate(model, loader)"))
    code_, findings, err = lint_json("--unsafe-fixes", "nb.ipynb", cwd=project)
    assert code_ == 1, err
    [finding] = findings
    assert list(finding)[:3] == ["path", "cell", "line"]
    assert (finding["cell"], finding["line"], finding["column"], finding["end_line"]) == (2, 5, 15, 5)
    edits = finding["fix"]["edits"]
    # An added import goes after the imports' cell's last character; the decorator before line 1
    # of the function's cell.
    assert [(e["cell"], e["location"]["line"], e["location"]["column"], e["content"]) for e in edits] == [
        (1, 1, 21, "\nimport torch"),
        (2, 1, 1, "@torch.no_grad()\n"),
    ]
    # Applied to the cells' sources, the edits give what --fix writes.
    sources = {number: "".join(cell["source"]) for number, cell in enumerate(cells_of(project / "nb.ipynb"), start=1)}
    for edit in reversed(edits):
        sources[edit["cell"]] = apply_edit(sources[edit["cell"]], edit)
    assert run_leaklint("--no-cache", "--fix", "--unsafe-fixes", "nb.ipynb", cwd=project).returncode == 0
    assert sources == {number: "".join(cell["source"]) for number, cell in enumerate(cells_of(project / "nb.ipynb"), start=1)}


def test_json_of_a_python_file_has_no_cell_key(project: Path) -> None:
    write(project / "train.py", f"{IMPORTS}\n{MODEL}\n{LEAKY_LOOP}\n")
    _, findings, _ = lint_json("train.py", cwd=project)
    assert "cell" not in findings[0]


def file_offset(text: str, line: int, column: int) -> int:
    """The offset of a 1-based line and column (code points) of a file's text."""
    lines = text.splitlines(keepends=True)
    return sum(len(part) for part in lines[: line - 1]) + column - 1


def test_github_annotations_point_at_the_code_in_the_notebooks_file(project: Path) -> None:
    """GitHub annotates the .ipynb file as stored, its JSON: the line holding the cell's line."""
    original = write(project / "nb.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP)).read_text(encoding="utf-8")
    out, _ = text(run_leaklint("--no-cache", "--format", "github", "nb.ipynb", cwd=project))
    match = re.fullmatch(
        r"::warning file=nb\.ipynb,line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+),title=LL101 loss-accumulation \(cell 3%2C line 7\)::'loss' is accumulated.*\n",
        out,
    )
    assert match, out
    line, column, end_line, end_column = map(int, match.groups())
    assert original.splitlines()[line - 1] == '    "    total_loss += loss"'
    assert original[file_offset(original, line, column) : file_offset(original, end_line, end_column)] == "total_loss += loss"


@pytest.mark.parametrize(
    "style",
    [{}, {"indent": None}, {"ensure_ascii": True}, {"as_string": True}],
    ids=["list-of-lines", "one-line-file", "ascii-escapes", "source-as-one-string"],
)
def test_github_and_sarif_locations_hold_in_every_json_layout(project: Path, style: dict[str, Any]) -> None:
    """Escapes before the finding (a quote, a tab, an emoji) count as the file spells them."""
    as_string = style.pop("as_string", False)
    loop = 'print("«début»\t😀")\n' + LEAKY_LOOP
    original = write(project / "nb.ipynb", notebook(IMPORTS, MODEL, code(loop, as_string=as_string), **style)).read_text(encoding="utf-8")
    out, _ = text(run_leaklint("--no-cache", "--format", "github", "nb.ipynb", cwd=project))
    line, column, end_line, end_column = map(int, re.search(r"line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+)", out).groups())
    assert original[file_offset(original, line, column) : file_offset(original, end_line, end_column)] == "total_loss += loss"
    log = json.loads(run_leaklint("--no-cache", "--format", "sarif", "nb.ipynb", cwd=project).stdout)
    [result] = log["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (line, column, end_line, end_column)
    assert result["properties"]["cellRegion"] == {"startLine": 8, "startColumn": 5, "endLine": 8, "endColumn": 23}


@pytest.fixture(scope="module")
def sarif_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    try:
        schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    except OSError as error:
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA}: {error}")
    validator = jsonschema.validators.validator_for(schema)
    return validator(schema, format_checker=validator.FORMAT_CHECKER)


def apply_sarif_fix(text: str, fix: dict[str, Any]) -> str:
    """A SARIF fix's replacements applied to the artifact's text, as a SARIF consumer does."""
    replacements = fix["artifactChanges"][0]["replacements"]
    spans = [
        (file_offset(text, r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
         file_offset(text, r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
         r["insertedContent"]["text"])
        for r in replacements
    ]
    for start, end, inserted in sorted(spans, reverse=True):
        text = text[:start] + inserted + text[end:]
    return text


def test_sarif_of_a_notebook_is_valid(project: Path, sarif_validator: Any) -> None:
    write(project / "nb.ipynb", notebook("from torch import nn", MODEL, LEAKY_LOOP, EVALUATE, "evaluate(model, loader)"))
    log = json.loads(run_leaklint("--no-cache", "--format", "sarif", "nb.ipynb", cwd=project).stdout)
    problems = sorted(sarif_validator.iter_errors(log), key=str)
    assert not problems, "\n".join(f"{list(p.absolute_path)}: {p.message}" for p in problems)


def test_sarif_regions_and_fixes_are_in_the_notebooks_file(project: Path) -> None:
    original = notebook("from torch import nn", MODEL, LEAKY_LOOP, EVALUATE, "evaluate(model, loader)")
    write(project / "nb.ipynb", original)
    result = run_leaklint("--no-cache", "--format", "sarif", "nb.ipynb", cwd=project)
    assert result.returncode == 1, text(result)
    log = json.loads(result.stdout)
    results = log["runs"][0]["results"]
    assert [(r["properties"]["cell"], r["properties"]["cellRegion"]["startLine"], r["ruleId"]) for r in results] == [
        (3, 7, "LL101"),
        (4, 5, "LL201"),
    ]
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "nb.ipynb"
    assert results[0]["message"]["text"].startswith("Cell 3, line 7: 'loss' is accumulated")
    shown = []
    for found in results:
        region = found["locations"][0]["physicalLocation"]["region"]
        shown.append(original[file_offset(original, region["startLine"], region["startColumn"]) : file_offset(original, region["endLine"], region["endColumn"])])
    assert shown == ["total_loss += loss", "model(x)"]
    # Each fix, applied to the .ipynb file as SARIF says, gives what --fix writes.
    replacements = results[1]["fixes"][0]["artifactChanges"][0]["replacements"]
    assert [r["properties"]["cell"] for r in replacements] == [1, 4]
    # (LL101's edit stays on its line, so LL201's regions still hold after it.)
    fixed_by_sarif = json.loads(apply_sarif_fix(apply_sarif_fix(original, results[0]["fixes"][0]), results[1]["fixes"][0]))
    assert run_leaklint("--no-cache", "--fix", "--unsafe-fixes", "nb.ipynb", cwd=project).returncode == 0
    fixed = json.loads((project / "nb.ipynb").read_text(encoding="utf-8"))
    joined = lambda data: [{**cell, "source": "".join(cell["source"])} for cell in data["cells"]]  # noqa: E731
    assert joined(fixed_by_sarif) == joined(fixed) and fixed_by_sarif["metadata"] == fixed["metadata"]


def test_sarif_fingerprints_survive_a_cell_added_above(project: Path) -> None:
    def fingerprint(*cells: str) -> str:
        write(project / "nb.ipynb", notebook(*cells))
        log = json.loads(run_leaklint("--no-cache", "--format", "sarif", "nb.ipynb", cwd=project).stdout)
        return log["runs"][0]["results"][0]["partialFingerprints"]["leaklint/v1"]

    assert fingerprint(IMPORTS, MODEL, LEAKY_LOOP) == fingerprint(IMPORTS, "print('hello')", MODEL, LEAKY_LOOP)


def test_a_cached_notebook_result_keeps_its_cells(project: Path) -> None:
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP))
    first = run_leaklint("--format", "json", "nb.ipynb", cwd=project)
    second = run_leaklint("--format", "json", "nb.ipynb", cwd=project)
    assert first.stdout == second.stdout and json.loads(second.stdout)[0]["cell"] == 3
    assert list((project / ".leaklint_cache").rglob("*.json")), "the result was cached"


def test_standard_input_named_as_a_notebook_is_read_as_one(project: Path) -> None:
    content = notebook(IMPORTS, MODEL, LEAKY_LOOP).encode()
    result = run_leaklint("--no-cache", "-", "--stdin-filename", "train.ipynb", input=content, cwd=project)
    assert result.returncode == 1, text(result)
    assert text(result)[0].startswith("train.ipynb:cell 3:7:5: LL101")


# --- suppressions ----------------------------------------------------------------------------------
def test_noqa_in_a_cell_suppresses_on_that_cells_line_only(project: Path) -> None:
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP + "  # noqa: LL101", LEAKY_LOOP))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1, err
    assert [(f["cell"], f["line"]) for f in findings] == [(4, 7)]


def test_masked_ipython_lines_neither_make_nor_hide_suppressions(project: Path) -> None:
    """A magic's text is not a Python comment: its "# noqa" suppresses nothing, and masking it
    moves no line, so a real noqa comment below it still sits on its finding's line. (A shell
    escape continued by a backslash takes the next line along, as IPython runs it.)"""
    shell_noqa = LEAKY_LOOP.replace("    total_loss += loss", '    !echo "# noqa" \\\n    total_loss += loss')
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, "%time f()  # noqa\n" + LEAKY_LOOP, "!ls  # noqa\n" + LEAKY_LOOP + "  # noqa"))
    code_, findings, err = lint_json("nb.ipynb", cwd=project)
    assert code_ == 1, err
    assert [(f["cell"], f["line"]) for f in findings] == [(3, 8)]
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, shell_noqa))
    assert run_leaklint("--no-cache", "nb.ipynb", cwd=project).returncode == 0


# --- fixing ---------------------------------------------------------------------------------------
def test_fix_rewrites_only_the_changed_lines_of_the_cells_source(project: Path) -> None:
    original = notebook(
        markdown("# Training — «résumé»"),
        code("!pip install -q torch\n%matplotlib inline\n" + IMPORTS, count=1, outputs=[STREAM_OUTPUT]),
        code(MODEL, count=2),
        code("%%time\n" + LEAKY_LOOP, count=3, outputs=[STREAM_OUTPUT, IMAGE_OUTPUT]),
    )
    path = write(project / "nb.ipynb", original)
    result = run_leaklint("--no-cache", "--fix", "--show-fixes", "nb.ipynb", cwd=project)
    out, err = text(result)
    assert result.returncode == 0, err
    assert "nb.ipynb:cell 4:8:5: LL101 Detach 'loss' (safe)" in out
    fixed = path.read_text(encoding="utf-8")
    assert fixed == original.replace('"    total_loss += loss"', '"    total_loss += loss.detach()"')
    assert json.loads(fixed)["cells"][3]["source"][0] == "%%time\n"


def test_fix_puts_masked_magics_back_even_in_a_reindented_block(project: Path) -> None:
    loop = "model.eval()\ncorrect = 0\nfor x, y in loader:\n    %time out = model(x)\n    out = model(x)\n    correct += (out.argmax(1) == y).sum().item()"
    path = write(project / "nb.ipynb", notebook("from torch import nn\n%matplotlib inline", loop))
    result = run_leaklint("--no-cache", "--fix", "--unsafe-fixes", "nb.ipynb", cwd=project)
    assert result.returncode == 0, text(result)
    first, second = ("".join(cell["source"]) for cell in cells_of(path))
    assert first == "from torch import nn\nimport torch\n%matplotlib inline"
    assert second == (
        "model.eval()\ncorrect = 0\nwith torch.no_grad():\n    for x, y in loader:\n        %time out = model(x)\n"
        "        out = model(x)\n        correct += (out.argmax(1) == y).sum().item()"
    )


@pytest.mark.parametrize(
    "style",
    [
        {"indent": 2, "sort_keys": False},
        {"indent": 4, "ensure_ascii": True},
        {"indent": None},
        {"trailing_newline": False},
    ],
    ids=["indent-2-unsorted", "indent-4-ascii", "one-line", "no-final-newline"],
)
def test_fix_keeps_the_notebooks_own_json_style(project: Path, style: dict[str, Any]) -> None:
    original = notebook(markdown("# «Entraînement»"), IMPORTS, MODEL, code(LEAKY_LOOP, outputs=[STREAM_OUTPUT], count=7), **style)
    path = write(project / "nb.ipynb", original)
    assert run_leaklint("--no-cache", "--fix", "nb.ipynb", cwd=project).returncode == 0
    assert path.read_text(encoding="utf-8") == original.replace('"    total_loss += loss"', '"    total_loss += loss.detach()"')


def test_fix_keeps_a_source_stored_as_one_string_a_string(project: Path) -> None:
    original = notebook(IMPORTS, MODEL, code(LEAKY_LOOP, as_string=True))
    path = write(project / "nb.ipynb", original)
    assert run_leaklint("--no-cache", "--fix", "nb.ipynb", cwd=project).returncode == 0
    assert cells_of(path)[2]["source"] == LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss.detach()")


def test_fix_adds_lines_to_the_cells_they_belong_to_in_the_files_layout(project: Path) -> None:
    """The decorator goes before line 1 of the function's cell, the import after the last import."""
    original = notebook("from torch import nn", EVALUATE, "evaluate(model, loader)")
    path = write(project / "nb.ipynb", original)
    assert run_leaklint("--no-cache", "--fix", "--unsafe-fixes", "nb.ipynb", cwd=project).returncode == 0
    sources = [cell["source"] for cell in cells_of(path)]
    assert sources[0] == ["from torch import nn\n", "import torch"]
    assert sources[1][:2] == ["@torch.no_grad()\n", "def evaluate(model, loader):\n"]
    assert '   "source": [\n    "from torch import nn\\n",\n    "import torch"\n   ]' in path.read_text()


def test_fix_leaves_a_clean_notebook_untouched(project: Path) -> None:
    path = write(project / "nb.ipynb", notebook(IMPORTS, MODEL, LEAKY_LOOP.replace("+= loss", "+= loss.item()")))
    before = path.stat().st_mtime_ns
    assert run_leaklint("--no-cache", "--fix", "nb.ipynb", cwd=project).returncode == 0
    assert path.stat().st_mtime_ns == before


def test_diff_shows_each_changed_cell_and_writes_nothing(project: Path) -> None:
    original = notebook(IMPORTS, MODEL, LEAKY_LOOP, EVALUATE, "evaluate(model, loader)")
    path = write(project / "nb.ipynb", original)
    result = run_leaklint("--no-cache", "--diff", "--unsafe-fixes", "nb.ipynb", cwd=project)
    out, err = text(result)
    assert result.returncode == 1, err
    assert out == (
        "--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n@@ -4,4 +4,4 @@\n"
        "     loss = criterion(model(x), y)\n     loss.backward()\n     optimizer.step()\n"
        "-    total_loss += loss\n+    total_loss += loss.detach()\n"
        "--- a/nb.ipynb:cell 4\n+++ b/nb.ipynb:cell 4\n@@ -1,3 +1,4 @@\n"
        "+@torch.no_grad()\n def evaluate(model, loader):\n     model.eval()\n     correct = 0\n"
    )
    assert err == "Would fix 2 findings in 1 file.\n"
    assert path.read_text(encoding="utf-8") == original


def test_fix_of_standard_input_prints_the_fixed_notebook(project: Path) -> None:
    original = notebook(IMPORTS, MODEL, code(LEAKY_LOOP, outputs=[STREAM_OUTPUT]))
    result = run_leaklint("--no-cache", "--fix", "-", "--stdin-filename", "nb.ipynb", input=original.encode(), cwd=project)
    out, err = text(result)
    assert result.returncode == 0, err
    assert out == original.replace('"    total_loss += loss"', '"    total_loss += loss.detach()"')


def test_fix_of_the_leaky_fixture_keeps_it_a_valid_notebook_with_its_outputs(project: Path) -> None:
    original = (ROOT / "fixtures" / "leaky_notebook.ipynb").read_text(encoding="utf-8")
    path = write(project / "nb.ipynb", original)
    result = run_leaklint("--no-cache", "--select", "ALL", "--fix", "--unsafe-fixes", "nb.ipynb", cwd=project)
    assert result.returncode == 0, text(result)
    before, after = json.loads(original), json.loads(path.read_text(encoding="utf-8"))
    assert after["nbformat"] == 4 and after["metadata"] == before["metadata"]
    assert len(after["cells"]) == len(before["cells"])
    for old, new in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
        assert all(isinstance(line, str) for line in new["source"])
    magic_lines = [line for cell in before["cells"] for line in cell["source"] if line.lstrip().startswith(("%", "!"))]
    assert magic_lines and all(line in [l for c in after["cells"] for l in c["source"]] for line in magic_lines)
    assert run_leaklint("--no-cache", "--select", "ALL", "nb.ipynb", cwd=project).returncode == 0


@pytest.mark.parametrize("output_format", ["text", "json", "github", "sarif"])
def test_the_leaky_fixture_gives_each_finding_with_its_cell_and_line_in_every_format(project: Path, output_format: str) -> None:
    """Issue 19's "done when": cell 5, line 10 (LL101), line 11 (LL102) and cell 8, line 5 (LL201),
    in each format; where a format addresses the file by line, that line is the one holding the code."""
    original = (ROOT / "fixtures" / "leaky_notebook.ipynb").read_text(encoding="utf-8")
    write(project / "nb.ipynb", original)
    result = run_leaklint("--no-cache", "--format", output_format, "nb.ipynb", cwd=project)
    out, err = text(result)
    assert result.returncode == 1, err
    expected = [
        (5, 10, 9, "LL101", "total_loss += loss"),
        (5, 11, 9, "LL102", "losses.append(loss)"),
        (8, 5, 19, "LL201", "model(x)"),
    ]
    if output_format == "text":
        assert [line.split(" [")[0] for line in out.splitlines() if line.startswith("nb.ipynb")] == [
            f"nb.ipynb:cell {cell}:{line}:{column}: {code}" for cell, line, column, code, _ in expected
        ]
        return
    if output_format == "json":
        assert [(f["cell"], f["line"], f["column"], f["code"]) for f in json.loads(out)] == [e[:4] for e in expected]
        return
    if output_format == "github":
        found = [
            (int(m["cell"]), int(m["cline"]), m["code"], original[file_offset(original, int(m["line"]), int(m["col"])) : file_offset(original, int(m["endLine"]), int(m["endColumn"]))])
            for m in re.finditer(
                r"line=(?P<line>\d+),col=(?P<col>\d+),endLine=(?P<endLine>\d+),endColumn=(?P<endColumn>\d+),title=(?P<code>LL\d+) [\w-]+ \(cell (?P<cell>\d+)%2C line (?P<cline>\d+)\)",
                out,
            )
        ]
    else:
        found = []
        for r in json.loads(out)["runs"][0]["results"]:
            region = r["locations"][0]["physicalLocation"]["region"]
            shown = original[file_offset(original, region["startLine"], region["startColumn"]) : file_offset(original, region["endLine"], region["endColumn"])]
            found.append((r["properties"]["cell"], r["properties"]["cellRegion"]["startLine"], r["ruleId"], shown))
    assert found == [(cell, line, code, shown) for cell, line, _, code, shown in expected]


def test_the_readmes_notebook_example_is_what_leaklint_prints() -> None:
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```console\n\$ leaklint (--quiet fixtures/leaky_notebook.ipynb)\n(.*?)```", readme, re.S)
    assert match, "README.md lost its notebook example"
    result = run_leaklint("--no-cache", *match.group(1).split(), cwd=ROOT)
    assert text(result)[0] == match.group(2)


# --- masking, line by line ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    ["%timeit f(x)", "%%time", "!pip install torch", "!!ls", "?model", "??model", "model?", "model.fc.weight??",
     "%matplotlib?", "files = !ls", "a, b = %sx ls", "pip install -U torch", "cd ../data", "/f 1 2", ",f a b"],
)
def test_ipython_lines_are_masked(line: str) -> None:
    masked, lines = mask_ipython(line + "\nx = 1\n", 1)
    assert masked.splitlines()[1] == "x = 1" and len(lines) == 1 and lines[0].original == line
    compile(masked, "<cell>", "exec")


@pytest.mark.parametrize(
    "source",
    ["time = 3", "config = {\n    'lr': 1e-3,\n}", "x = f(\n    %y\n)", 's = """\n!not a shell escape\n"""', "ls", "x = a % b",
     "print(x)  # ! not magic", "run(model)"],
)
def test_python_lines_are_not_masked(source: str) -> None:
    assert mask_ipython(source, 1) == (source, ())


# --- following cells through fixes, unit by unit ----------------------------------------------------
def _program(*cells: str) -> tuple[Notebook, Program]:
    parsed = Notebook.parse(notebook(*cells))
    return parsed, parsed.program()


def _insert(offset: int, text: str) -> TextEdit:
    return TextEdit(offset, offset, text, 0, 0, 0, 0)


def test_the_program_is_the_code_cells_with_a_blank_line_after_each() -> None:
    _, program = _program("import torch", "%time x = 1\ny = 2\n")
    assert program.text == "import torch\n\n# ipython-syntax:2.1\ny = 2\n\n"
    assert [(b.cell.number, b.first_line, b.line_count) for b in program.blocks] == [(1, 1, 1), (2, 3, 2)]


def test_an_insertion_at_a_cells_first_or_past_its_last_character_is_that_cells() -> None:
    parsed, program = _program("import os", "def f():\n    pass")
    first, second = program.blocks
    edits = [_insert(first.end, "import torch\n"), _insert(second.start, "@decorated\n")]
    fixed = program.text[: first.end] + "import torch\n" + "\n" + "@decorated\n" + program.text[second.start :]
    assert program.fixed_sources(fixed, [edits]) == {1: "import os\nimport torch", 2: "@decorated\ndef f():\n    pass"}


def test_an_edit_across_two_cells_or_into_masked_syntax_is_refused() -> None:
    _, program = _program("x = 1", "!ls\ny = 2")
    first, second = program.blocks
    across = TextEdit(first.end - 2, second.start + 1, "", 0, 0, 0, 0)
    with pytest.raises(NotebookError, match="spans two cells"):
        program.fixed_sources(program.text, [[across]])
    masked_line = program.text.index("# ipython-syntax:2.1")
    changed = program.text[:masked_line] + "pass" + program.text[masked_line + len("# ipython-syntax:2.1") :]
    with pytest.raises(NotebookError, match="IPython syntax in cell 2"):
        program.fixed_sources(changed, [[TextEdit(masked_line, masked_line + 20, "pass", 0, 0, 0, 0)]])


@pytest.mark.parametrize(
    "fixed_line, restored",
    [
        ("    pass  # ipython-syntax:1.1", "    %time f()"),  # unchanged
        ("        pass  # ipython-syntax:1.1", "        %time f()"),  # wrapped in a block
        ("pass  # ipython-syntax:1.1", "%time f()"),  # a block unwrapped
        ("    pass  # changed", None),
    ],
)
def test_a_masked_line_comes_back_with_the_indentation_its_mask_was_given(fixed_line: str, restored: str | None) -> None:
    _, (masked,) = mask_ipython("for i in x:\n    %time f()", 1)
    assert restore_line(fixed_line, masked) == restored


@pytest.mark.parametrize(
    "target, replacement",
    [
        ("y = 2\n", ""),  # the cell's last statement removed, with the line break the program added
        ("2\n", "3\n"),  # the last line's end rewritten
        ("\n\n", "\nz = 3\n\n"),  # an insertion past the cell's last line
        ("x = 1\n", "x = 1\nw = 0\n"),  # inside the cell
    ],
)
def test_a_reported_edit_applied_to_its_cell_gives_what_fix_writes(target: str, replacement: str) -> None:
    _, program = _program("%matplotlib inline\nx = 1\ny = 2", "print(x)")
    start = program.text.index(target)
    if target == "\n\n":  # an insertion at the separator: past the first cell's last line
        start, end, replacement = start + 1, start + 1, "z = 3\n"
    else:
        end = start + len(target)
    edit = TextEdit(start, end, replacement, 0, 0, 0, 0)
    fixed = program.text[:start] + replacement + program.text[end:]
    written = program.fixed_sources(fixed, [[edit]])[1]
    finding = Finding("nb.ipynb", 2, 1, 2, 2, "LL101", "name", Severity.LEAK, Confidence.HIGH, "m", "h", fix=Fix("t", Applicability.SAFE, (edit,)))
    [local] = program.localize(finding).fix.edits
    source = "%matplotlib inline\nx = 1\ny = 2"
    assert local.cell == 1 and source[: local.start] + local.replacement + source[local.end :] == written
    assert apply_edit(source, {"location": {"line": local.line, "column": local.column},
                               "end_location": {"line": local.end_line, "column": local.end_column},
                               "content": local.replacement}) == written


# --- what a notebook's kernel does ----------------------------------------------------------------
FIGURE_LOOP = textwrap.dedent(
    """\
    import matplotlib.pyplot as plt
    for epoch in range(50):
        train_one_epoch(model, loader)
        plt.figure()
        plt.plot(history)"""
)  # a figure per epoch, never closed: line 4, column 5


def test_figures_a_cell_only_displays_are_closed_by_the_inline_backend(project: Path) -> None:
    """The inline backend shows and closes a cell's figures when the cell ends: a cell that only
    displays them is its output (shown with --min-confidence low); the same loop in a script, or
    a cell that saves or logs every figure (savefig, wandb.Image, log_figure), keeps them open."""
    write(project / "shown.ipynb", notebook(IMPORTS, FIGURE_LOOP))
    write(project / "saved.ipynb", notebook(IMPORTS, FIGURE_LOOP + '\n    plt.savefig(f"loss_{epoch}.png")'))
    write(project / "helper.ipynb", notebook(IMPORTS, "def save(path):\n    plt.savefig(path)", FIGURE_LOOP + '\n    save(f"loss_{epoch}.png")'))
    write(project / "wandb.ipynb", notebook(IMPORTS + "\nimport wandb", FIGURE_LOOP + '\n    wandb.log({"loss": wandb.Image(plt.gcf())})'))
    write(project / "logged.ipynb", notebook(IMPORTS, FIGURE_LOOP + '\n    run.log_figure(plt.gcf(), f"loss_{epoch}.png")'))
    write(project / "script.py", f"{IMPORTS}\n{FIGURE_LOOP}\n")
    _, findings, err = lint_json("--select", "LL303", "--min-confidence", "low", ".", cwd=project)
    confidence = {Path(f["path"]).name: f["confidence"] for f in findings}
    assert confidence == {
        "shown.ipynb": "low", "saved.ipynb": "medium", "helper.ipynb": "medium",
        "wandb.ipynb": "medium", "logged.ipynb": "medium", "script.py": "medium",
    }, (findings, err)
    shown = next(f for f in findings if f["path"].endswith("shown.ipynb"))
    assert "inline backend" in shown["message"]


PREDICT = textwrap.dedent(
    """\
    import lightning.pytorch as pl

    class Encoder(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(16, 512)

        def predict_step(self, batch, batch_idx):
            return self.net(batch)

    trainer = pl.Trainer(devices=1)"""
)


def test_a_predict_call_a_cell_displays_is_its_output(project: Path) -> None:
    """A cell's top-level `trainer.predict(...)` is displayed and kept in the output history: the
    user asked for the list. The same call in a function of the notebook, or in a script, drops it."""
    write(project / "shown.ipynb", notebook(IMPORTS, PREDICT, "trainer.predict(Encoder(), loader)"))
    write(project / "function.ipynb", notebook(IMPORTS, PREDICT, "def embed(loader):\n    trainer.predict(Encoder(), loader)"))
    write(project / "script.py", f"{IMPORTS}\n{PREDICT}\ntrainer.predict(Encoder(), loader)\n")
    _, findings, err = lint_json("--select", "LL310", ".", cwd=project)
    assert sorted(Path(f["path"]).name for f in findings) == ["function.ipynb", "script.py"], (findings, err)


def test_lines_a_message_names_are_counted_in_their_cells(project: Path) -> None:
    """A message that points at another line (the loop, the forward) names it as the notebook
    shows it: the line within the same cell, or the line and the cell when it is in another."""
    helper = "def predict(model, x):\n    return model(x)"
    loop = "preds = []\nfor x, _ in loader:\n    preds.append(predict(model, x))"
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, helper, loop))
    _, findings, err = lint_json("--select", "ALL", "--min-confidence", "low", "nb.ipynb", cwd=project)
    assert findings, err
    for finding in findings:
        for named in re.findall(r"\bline (\d+)( of cell (\d+))?", finding["message"] + finding.get("help", "")):
            line, _, cell = named
            cell_number = int(cell) if cell else finding["cell"]
            assert 1 <= int(line) <= len(cells_of(project / "nb.ipynb")[cell_number - 1]["source"]), finding


def test_code_a_message_quotes_keeps_its_text(project: Path) -> None:
    """Only the message's own line references are counted in cells: the code it quotes from
    the user's cell stays as written, "line 2" in a string included."""
    loop = 'outs = []\nfor batch in torch.utils.data.DataLoader(rows):\n    outs.append(model(batch["line 2"]))'
    write(project / "nb.ipynb", notebook(IMPORTS, MODEL, loop))
    _, findings, err = lint_json("--select", "LL102", "nb.ipynb", cwd=project)
    assert findings and all('model(batch["line 2"])' in f["message"] for f in findings), (findings, err)
