"""Shared program facts the rules ask for; rules never import each other, they import these.

``facts`` (ModuleFacts, the one object rules read) builds on ``provenance`` (values, grad mode,
model calls), ``structure`` (classes, functions, loops), ``names`` (import aliases) and ``walk``.
Built on demand from them, once per file: ``index`` (statements, calls and bindings by function),
``places`` (where a node runs: scope, loops and their level, guards, except/finally context),
``calls`` (which local function a call runs, and a function's call sites), ``steps`` (which
functions run once per step), ``hooks`` (hook registrations and hook functions), ``carry``
(graphs carried across iterations), ``keras`` (Keras models), ``syntax`` (call arguments,
literals, roots of expressions) and ``positions`` (line numbers).

Facts are built from libcst's tree, the one tree of a run: parsed once per file the gate lets
through (:mod:`leaklint.gate`).
"""
