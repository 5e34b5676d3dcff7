"""The language server: documents in, diagnostics out, code actions and hovers on request.

Linting runs on one worker thread, so the protocol keeps answering while a large file is linted,
and two lints never run at once (the engine pauses the garbage collector and sets the recursion
limit for the process while it works). A change is linted after a pause in typing (``debounce``
seconds; a newer change cancels the wait); opening and saving lint at once. A lint whose document
changed meanwhile is not published: the newer one will be. Code actions and hovers answer from
the snapshot of the current version, linting first when the last snapshot is older.

A notebook (``notebookDocument/*``) is one document made of its cells: the code cells are linted
together, as ``leaklint check`` lints an ``.ipynb``, and each cell gets its own diagnostics.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from leaklint import __version__
from leaklint.engine import STDIN_PATH
from leaklint.findings import ErrorKind, FileError
from leaklint.server.actions import KINDS, code_actions
from leaklint.server.diagnostics import error_diagnostic, finding_diagnostic
from leaklint.server.hover import hover
from leaklint.server.linting import CellText, Linted, lint_buffer, lint_notebook
from leaklint.server.snapshot import Snapshot

#: Seconds of quiet after a change before it is linted (LEAKLINT_SERVER_DEBOUNCE overrides).
DEFAULT_DEBOUNCE = 0.3
_PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class _Request:
    """What to lint, captured on the protocol's thread: plain strings the worker can own."""

    key: str
    version: int | None
    path: str
    text: str = ""
    cells: tuple[CellText, ...] | None = None


class LeaklintServer(LanguageServer):
    """pygls' server plus the open documents' snapshots and the pending debounced lints."""

    def __init__(self, debounce: float = DEFAULT_DEBOUNCE) -> None:
        super().__init__(
            "leaklint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")], notebook="*")
                ],
                save=True,
            ),
        )
        self.debounce = debounce
        self.snapshots: dict[str, Snapshot] = {}
        self._published: dict[str, list[str]] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="leaklint-lint")

    # --- what is open ---------------------------------------------------------------------------
    def _fallback_root(self) -> Path:
        root = self.workspace.root_path if self.workspace is not None else None
        return Path(root) if root else Path.cwd()

    def _encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def key_for(self, uri: str) -> str:
        """The snapshot key of an editor document: its notebook's URI for a cell, else its own."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def _open_document(self, uri: str) -> TextDocument | None:
        """The open document ``uri`` names (pygls keeps them by unquoted URI: a path with a space)."""
        return self.workspace.text_documents.get(unquote(uri))  # type: ignore[no-any-return]

    def _version(self, key: str) -> int | None:
        notebook = self.workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            return notebook.version
        document = self._open_document(key)
        return document.version if document is not None else None

    def _request(self, key: str) -> _Request | None:
        """What linting ``key`` now means; None for a document that is closed or not Python."""
        path = to_fs_path(key) or STDIN_PATH
        notebook = self.workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            cells = []
            for cell in notebook.cells:
                document = self._open_document(cell.document)
                if document is None:
                    continue
                code = cell.kind == types.NotebookCellKind.Code and (document.language_id or "python") == "python"
                cells.append(CellText(cell.document, code, document.source))
            return _Request(key, notebook.version, path, cells=tuple(cells))
        document = self._open_document(key)
        if document is None:
            return None
        if document.language_id != "python" and not path.endswith(_PYTHON_SUFFIXES):
            return None
        if path.endswith(".ipynb"):
            return None  # a notebook's JSON as text: its cells come as a notebook document instead
        return _Request(key, document.version, path, text=document.source)

    # --- linting --------------------------------------------------------------------------------
    def _lint(self, request: _Request) -> Snapshot:
        """Runs on the worker: never raises (a bug becomes one diagnostic, not a dead server)."""
        try:
            if request.cells is not None:
                linted = lint_notebook(request.cells, request.path, self._fallback_root())
            else:
                linted = lint_buffer(request.text, request.path, self._fallback_root())
        except Exception as error:  # noqa: BLE001 - the server outlives any bug in a lint
            logger.exception("linting %s failed", request.key)
            reason = f"internal error: {type(error).__name__}: {error} (please report this)"
            linted = Linted(request.path, request.text, errors=[FileError(request.path, ErrorKind.INTERNAL, reason)], cells=request.cells or ())
        return Snapshot(request.key, linted, request.version, self._encoding())

    async def refresh(self, key: str) -> Snapshot | None:
        """Lint ``key`` now and publish; the snapshot, or None if the document changed meanwhile."""
        request = self._request(key)
        if request is None:
            return None
        snapshot = await self.on_worker(self._lint, request)
        if self._version(key) != request.version or self._request(key) is None:
            return None
        self.snapshots[key] = snapshot
        self.publish(snapshot)
        return snapshot

    async def on_worker(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` on the lint worker: "fix all" lints again, and must not run beside a lint."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, function, *args)

    def schedule(self, key: str, delay: float) -> None:
        """Lint ``key`` after ``delay`` seconds, replacing a lint still waiting for it."""
        pending = self._pending.pop(key, None)
        if pending is not None:
            pending.cancel()
        self._pending[key] = asyncio.get_running_loop().create_task(self._lint_later(key, delay))

    async def _lint_later(self, key: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            await self.refresh(key)
        finally:
            if self._pending.get(key) is asyncio.current_task():
                del self._pending[key]

    async def current(self, uri: str) -> Snapshot | None:
        """The snapshot of ``uri``'s current version (linting it first if needed)."""
        key = self.key_for(uri)
        snapshot = self.snapshots.get(key)
        if snapshot is not None and snapshot.version == self._version(key):
            return snapshot
        return await self.refresh(key)

    def publish(self, snapshot: Snapshot) -> None:
        """Send each of the snapshot's documents its diagnostics; clear cells that are gone."""
        uris = snapshot.uris()
        for uri in uris:
            target = snapshot.target(snapshot.cell_number(uri))
            if target is None:
                continue
            index = target[2]
            diagnostics = [finding_diagnostic(index, finding) for finding in snapshot.findings_for(uri)]
            diagnostics += [error_diagnostic(index, error) for error in snapshot.errors_for(uri)]
            version = snapshot.version if not snapshot.is_notebook else None
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))
        self.clear(snapshot.uri, keep=uris)
        self._published[snapshot.uri] = uris

    def clear(self, key: str, keep: list[str] = []) -> None:  # noqa: B006 - never mutated
        """Empty the diagnostics of ``key``'s documents (all but ``keep``)."""
        for uri in self._published.pop(key, []):
            if uri not in keep:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def close(self, key: str) -> None:
        pending = self._pending.pop(key, None)
        if pending is not None:
            pending.cancel()
        self.snapshots.pop(key, None)
        self.clear(key)


def _debounce_from_environment() -> float:
    try:
        return max(0.0, float(os.environ.get("LEAKLINT_SERVER_DEBOUNCE", DEFAULT_DEBOUNCE)))
    except ValueError:
        return DEFAULT_DEBOUNCE


def build_server() -> LeaklintServer:
    """The server with every feature registered."""
    server = LeaklintServer(_debounce_from_environment())

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: LeaklintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: LeaklintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: LeaklintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: LeaklintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_open(ls: LeaklintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_change(ls: LeaklintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, ls.debounce)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def notebook_save(ls: LeaklintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    async def notebook_close(ls: LeaklintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close(params.notebook_document.uri)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS))
    async def code_action(ls: LeaklintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        snapshot = await ls.current(params.text_document.uri)
        if snapshot is None:
            return None
        return await ls.on_worker(code_actions, snapshot, params.text_document.uri, params) or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: LeaklintServer, params: types.HoverParams) -> types.Hover | None:
        snapshot = await ls.current(params.text_document.uri)
        if snapshot is None:
            return None
        return await ls.on_worker(hover, snapshot, params.text_document.uri, params.position)

    return server


def serve() -> None:
    """Run the server on standard input and output until the client says exit."""
    protocol_in, protocol_out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the protocol's stream
    build_server().start_io(protocol_in, protocol_out)
