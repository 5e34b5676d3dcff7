"""``leaklint server`` end to end: a real LSP client (pytest-lsp) talks to the server over stdio.

One server process serves the whole module (starting one imports libcst and the rules); each test
opens its own documents in its own folder, so the tests do not see each other's files. The client
applies the server's edits itself, as an editor would, and sends the result back as a change.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest
from conftest import LEAKY_LOOP

pytest.importorskip("pygls", reason="the server extra is not installed (pip install -e '.[server]' or '.[test]')")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed (pip install -e '.[test]')")

from lsprotocol import types  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")
TIMEOUT = 60
SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "leaklint", "server"],
    server_env={**os.environ, "LEAKLINT_SERVER_DEBOUNCE": "0.05"},
)


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"), root_uri=from_fs_path(os.getcwd()))
    )
    yield
    await lsp_client.shutdown_session()


# --- what an editor does ------------------------------------------------------------------------
async def diagnostics_for(client: LanguageClient, uri: str, ready: Callable[[list[types.Diagnostic]], bool] = lambda found: True) -> list[types.Diagnostic]:
    """``uri``'s diagnostics once the server has published some that are ``ready``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while loop.time() < deadline:
        if uri in client.diagnostics and ready(list(client.diagnostics[uri])):
            return list(client.diagnostics[uri])
        await asyncio.sleep(0.02)
    raise AssertionError(f"no such diagnostics for {uri} in {TIMEOUT} s; last published: {client.diagnostics.get(uri)}")


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diagnostics]


def write_project(folder: Path, config: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(f"[tool.leaklint]\n{config}")


def open_document(client: LanguageClient, path: Path, text: str) -> str:
    uri = from_fs_path(str(path))
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


def change_document(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def offset(text: str, position: types.Position) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: position.line]) + position.character  # ASCII texts: UTF-16 == code points


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits as a client does: all against the original text, last first."""
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(text, edit.range.start)] + edit.new_text + text[offset(text, edit.range.end) :]
    return text


async def code_actions(client: LanguageClient, uri: str, diagnostic: types.Diagnostic, only: list[str] | None = None) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
    )
    return [action for action in result or [] if isinstance(action, types.CodeAction)]


def only_edits(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.changes is not None
    assert set(action.edit.changes) == {uri}
    return list(action.edit.changes[uri])


# --- the tests ------------------------------------------------------------------------------------
async def test_a_leaky_loop_gets_a_diagnostic_with_code_severity_confidence_and_link(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    uri = open_document(client, tmp_path / "train.py", LEAKY_LOOP)
    [diagnostic] = await diagnostics_for(client, uri)
    assert diagnostic.code == "LL101" and diagnostic.source == "leaklint"
    assert diagnostic.range.start == types.Position(line=9, character=8)
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert "[leak, high confidence]" in diagnostic.message
    assert diagnostic.code_description is not None and diagnostic.code_description.href.endswith("#what-it-finds")
    assert diagnostic.data["confidence"] == "high" and diagnostic.data["fix"] == "safe"


async def test_the_fix_removes_the_diagnostic(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    uri = open_document(client, tmp_path / "train.py", LEAKY_LOOP)
    [diagnostic] = await diagnostics_for(client, uri)
    actions = await code_actions(client, uri, diagnostic)
    [fix] = [action for action in actions if action.kind == types.CodeActionKind.QuickFix and "safe fix" in action.title]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    fixed = apply_edits(LEAKY_LOOP, only_edits(fix, uri))
    assert "total_loss += loss.detach()" in fixed
    change_document(client, uri, 2, fixed)
    assert await diagnostics_for(client, uri, lambda found: not found) == []


async def test_suppress_on_this_line_adds_a_noqa_comment_that_silences_the_finding(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    uri = open_document(client, tmp_path / "train.py", LEAKY_LOOP)
    [diagnostic] = await diagnostics_for(client, uri)
    [suppress] = [action for action in await code_actions(client, uri, diagnostic) if "suppress" in action.title]
    suppressed = apply_edits(LEAKY_LOOP, only_edits(suppress, uri))
    assert "        total_loss += loss  # noqa: LL101\n" in suppressed
    change_document(client, uri, 2, suppressed)
    assert await diagnostics_for(client, uri, lambda found: not found) == []


async def test_suppress_merges_with_an_existing_noqa_comment(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    text = LEAKY_LOOP.replace("total_loss += loss\n", "total_loss += loss  # noqa: E501\n")
    uri = open_document(client, tmp_path / "train.py", text)
    [diagnostic] = await diagnostics_for(client, uri)
    [suppress] = [action for action in await code_actions(client, uri, diagnostic) if "suppress" in action.title]
    assert "total_loss += loss  # noqa: E501, LL101\n" in apply_edits(text, only_edits(suppress, uri))


async def test_fix_all_safe_is_a_source_fix_all_action(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    text = LEAKY_LOOP.replace("        return total_loss", "        history.append(loss)\n        return total_loss").replace(
        "    total_loss = 0\n", "    total_loss = 0\n    history = []\n"
    )
    uri = open_document(client, tmp_path / "train.py", text)
    diagnostics = await diagnostics_for(client, uri)
    assert "LL101" in {d.code for d in diagnostics}
    [fix_all] = await code_actions(client, uri, diagnostics[0], only=[types.CodeActionKind.SourceFixAll])
    assert fix_all.kind == "source.fixAll.leaklint"
    fixed = apply_edits(text, only_edits(fix_all, uri))
    assert "total_loss += loss.detach()" in fixed
    change_document(client, uri, 2, fixed)
    assert "LL101" not in codes(await diagnostics_for(client, uri, lambda found: "LL101" not in codes(found)))


async def test_hover_on_a_finding_shows_the_rules_docs(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    uri = open_document(client, tmp_path / "train.py", LEAKY_LOOP)
    [diagnostic] = await diagnostics_for(client, uri)
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri=uri), diagnostic.range.start))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert "# LL101 loss-accumulation" in hover.contents.value and "high confidence" in hover.contents.value
    nothing = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(0, 0)))
    assert nothing is None


async def test_a_syntax_error_gives_one_informative_diagnostic_and_the_server_lives_on(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    uri = open_document(client, tmp_path / "train.py", "def train(:\n    pass\n")
    [diagnostic] = await diagnostics_for(client, uri)
    assert "syntax error" in diagnostic.message and diagnostic.range.start.line == 0
    assert diagnostic.severity == types.DiagnosticSeverity.Information
    change_document(client, uri, 2, LEAKY_LOOP)
    assert codes(await diagnostics_for(client, uri, lambda found: codes(found) == ["LL101"])) == ["LL101"]


async def test_settings_come_from_the_nearest_config(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path / "ignores", 'per-file-ignores = { "scripts/*.py" = ["LL101"] }\n')
    uri = open_document(client, tmp_path / "ignores" / "scripts" / "train.py", LEAKY_LOOP)
    assert await diagnostics_for(client, uri) == []
    uri = open_document(client, tmp_path / "ignores" / "train.py", LEAKY_LOOP)
    assert codes(await diagnostics_for(client, uri)) == ["LL101"]
    write_project(tmp_path / "selects", 'select = ["LL2"]\n')
    uri = open_document(client, tmp_path / "selects" / "train.py", LEAKY_LOOP)
    assert await diagnostics_for(client, uri) == []


async def test_a_broken_config_is_one_error_diagnostic(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path, 'selcet = ["LL1"]\n')
    uri = open_document(client, tmp_path / "train.py", LEAKY_LOOP)
    [diagnostic] = await diagnostics_for(client, uri)
    assert diagnostic.severity == types.DiagnosticSeverity.Error and "unknown key 'selcet'" in diagnostic.message


NOTEBOOK_CELLS = [
    "import torch\n\ntotal_loss = 0",
    "# Training",
    textwrap.dedent(
        """\
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss"""
    ),
]


async def test_notebook_cells_are_linted_together_and_diagnosed_per_cell(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    notebook_uri = from_fs_path(str(tmp_path / "train.ipynb"))
    cell_uris = [f"vscode-notebook-cell:{tmp_path}/train.ipynb#cell{n}" for n in range(3)]
    kinds = [types.NotebookCellKind.Code, types.NotebookCellKind.Markup, types.NotebookCellKind.Code]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=kind, document=uri) for kind, uri in zip(kinds, cell_uris)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id="python" if kind == types.NotebookCellKind.Code else "markdown", version=1, text=text)
                for uri, kind, text in zip(cell_uris, kinds, NOTEBOOK_CELLS)
            ],
        )
    )
    [diagnostic] = await diagnostics_for(client, cell_uris[2])
    assert diagnostic.code == "LL101" and diagnostic.range.start == types.Position(line=5, character=4)
    assert await diagnostics_for(client, cell_uris[0]) == []
    [fix] = [action for action in await code_actions(client, cell_uris[2], diagnostic) if action.kind == types.CodeActionKind.QuickFix and "safe fix" in action.title]
    assert "total_loss += loss.detach()" in apply_edits(NOTEBOOK_CELLS[2], only_edits(fix, cell_uris[2]))
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri=cell_uris[2]), diagnostic.range.start))
    assert hover is not None and "LL101" in hover.contents.value  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    ["", "\x00 not python", "def train(:\n", "x = '''never closed\n", "(" * 3000 + ")" * 3000, "\ufeffimport torch\n", "\t  \n\f\n"],
    ids=["empty", "nul", "syntax", "unterminated", "deep", "bom", "whitespace"],
)
async def test_bad_input_never_crashes_the_server(client: LanguageClient, tmp_path: Path, text: str) -> None:
    write_project(tmp_path)
    uri = open_document(client, tmp_path / "odd.py", text)
    assert len(await diagnostics_for(client, uri)) <= 1
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(0, 0)))
    assert hover is None
    change_document(client, uri, 2, LEAKY_LOOP)
    assert codes(await diagnostics_for(client, uri, lambda found: codes(found) == ["LL101"])) == ["LL101"]


async def test_fix_all_in_a_notebook_edits_the_cells_that_change(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    notebook_uri = from_fs_path(str(tmp_path / "fix.ipynb"))
    cell_uris = [f"vscode-notebook-cell:{tmp_path}/fix.ipynb#cell{n}" for n in range(2)]
    cells = [NOTEBOOK_CELLS[0], "%matplotlib inline\n" + NOTEBOOK_CELLS[2]]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=uri) for uri in cell_uris],
            ),
            cell_text_documents=[types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text) for uri, text in zip(cell_uris, cells)],
        )
    )
    [diagnostic] = await diagnostics_for(client, cell_uris[1])
    assert diagnostic.range.start.line == 6  # below the IPython magic, which the cell keeps
    [fix_all] = await code_actions(client, cell_uris[1], diagnostic, only=[types.CodeActionKind.SourceFixAll])
    fixed = apply_edits(cells[1], only_edits(fix_all, cell_uris[1]))
    assert fixed.startswith("%matplotlib inline\n") and fixed.endswith("total_loss += loss.detach()")


async def test_a_burst_of_changes_ends_with_the_last_ones_diagnostics(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path)
    uri = open_document(client, tmp_path / "train.py", LEAKY_LOOP)
    assert codes(await diagnostics_for(client, uri)) == ["LL101"]
    clean = LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss.item()")
    for version in range(2, 8):
        change_document(client, uri, version, clean if version % 2 else LEAKY_LOOP)
    assert await diagnostics_for(client, uri, lambda found: not found) == []
    await asyncio.sleep(0.5)  # no lint of an older version is published after the newest
    assert list(client.diagnostics[uri]) == []


async def test_a_path_with_spaces_and_non_ascii_letters(client: LanguageClient, tmp_path: Path) -> None:
    write_project(tmp_path / "my project")
    uri = open_document(client, tmp_path / "my project" / "entraînement.py", LEAKY_LOOP)
    assert "%20" in uri
    [diagnostic] = await diagnostics_for(client, uri)
    assert diagnostic.code == "LL101"
    assert len(await code_actions(client, uri, diagnostic)) == 3  # fix, suppress, fix all
