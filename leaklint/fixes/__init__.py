"""Fixes, from what a rule proposes to the file on disk, in the order they happen:

- ``spec``: what a rule proposes (:class:`~leaklint.fixes.spec.SuggestedFix`: edits of tree nodes,
  such as "wrap this call in ``.detach()``", with an applicability: safe, unsafe, display-only);
- ``edits``: turns them into text edits of the source, positioned on libcst's tree;
- ``apply``: applies non-overlapping text edits, renders diffs, writes files atomically;
- ``fixer``: lints, applies the allowed fixes, lints again until nothing changes (notebooks by cell);
- ``command``: the ``--fix`` and ``--diff`` modes of ``leaklint check``.
"""
