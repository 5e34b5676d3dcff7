"""``leaklint server``: a Language Server Protocol server for editors, on pygls (the ``server`` extra).

The modules split the work so that only :mod:`leaklint.server.app` knows pygls (it also holds
``serve``, which ``leaklint server`` runs): ``linting`` finds the settings for a document and lints
it (a file or a notebook's cells) with the engine the command line uses; ``positions`` turns
leaklint's 1-based code-point columns into LSP positions in the encoding the client negotiated;
``diagnostics``, ``actions`` and ``hover`` build the protocol's answers from lsprotocol's types;
``noqa`` writes suppression comments. Nothing here is imported by ``leaklint`` itself until
``leaklint server`` runs, so the command line starts as fast without the extra as with it.
"""

from __future__ import annotations

#: What ``leaklint server`` prints (after ``leaklint: error:``) when pygls is not installed.
INSTALL_HINT = "'leaklint server' needs the server extra: pip install 'leaklint-ml[server]'"
