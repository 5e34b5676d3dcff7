"""The screening tree (leaklint/analysis/from_ast.py): libcst's node shapes built from ``ast``.

The analysis reads node types, the fields that hold code, and the text of literals. On all of
those the built tree must equal libcst's parse; only formatting (spaces, comments, parentheses)
is left at libcst's defaults.
"""

from __future__ import annotations

import ast
import sysconfig
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

from leaklint.analysis import nodes as cst  # the classes this process analyses with: libcst's, or the mirror's
from leaklint.analysis.from_ast import Unsupported, module_from_ast
from leaklint.analysis.parsing import parse_module
from leaklint.registry import all_rules
from leaklint.testing import shape_differences

RULES = all_rules()


def differences(source: str) -> list[str]:
    return shape_differences(parse_module(source), module_from_ast(source, ast.parse(source)))


SNIPPETS = {
    "elif and else-if": """\
        if a:
            pass
        elif b:
            pass
        else:
            if c:
                pass
            elif d:
                x = 1
        """,
    "one-line suites and semicolons": """\
        if a: b; c
        while x: x -= 1
        for i in y: pass
        else: z = 2
        a = 1; b = 2
        c = '''x
        '''; d = 3
        class A: pass
        def f(): return 1
        try: pass
        except E: pass
        with a: b()
        class B:\\
         pass
        if c:  # a comment ending in a backslash \\
            pass
        """,
    "call arguments in source order": """\
        f(a, *b, c=1, **d)
        f(c=1, *b)
        f(x for x in y)
        g(*a, *b, k=v, **m, **n)
        """,
    "subscripts": """\
        x[a, b]
        x[(a, b)]
        x[(a), b]
        x[()]
        x[1:2, ::3]
        x[a:b, ...]
        x[None, :, i]
        x[a,]
        x[(a, b), c]
        """,
    "strings": '''\
        a = "x" 'y'
        b = ("x"  # a comment
             "y")
        c = "x" \\
            "y"
        d = b"\\x00" rb'\\d'
        e = "it's \\"quoted\\"" 'and \\\\'
        f = """doc with \\""" inside"""
        g = "a" f"b{c}" "d"
        h = f"{x=}" f"{y = }" f"{a.b=!s:>10}"
        i = f"k={k}" f"{k}=" f"{'=' if p else '!='}"
        j = f"{f'{x}'}" f"{x!r:>{w}}"
        k = f"""{a}\\
        {b}"""
        ''',
    "numbers": """\
        a = 0x10 + 1_000 + 0o7 + 0b1 + 1e-3 + 2j + 1.5J + .5 + 5.
        b = -1
        c = f"{x[0]:.2f}"
        """,
    "parameters": """\
        def f(a, /, b=1, *args, c, d=2, **kw): pass
        def g(a, *, b): pass
        def h(a: int = 1, *b: str, c: float, **d: bytes) -> None: pass
        lam = lambda a, *b, c=1, **d: 0
        lam2 = lambda: 0
        lam3 = lambda a, /, b: 0
        """,
    "definitions": """\
        @decorator
        @other(1)
        class A(B, *bases, metaclass=M, **kw):
            x: int
            y: int = 2

            @property
            async def f(self):
                async for a in b:
                    await c
                async with d as e, f:
                    yield
                yield from g
        """,
    "statements": """\
        import a.b as c, d
        from .. import x
        from .a.b import (c as d, e)
        from m import *
        del a, b
        del (c)
        global q, r
        raise A from B
        raise
        assert x, "message"
        a = b = c
        a, *b = c
        (a, b) = [c, d] = e
        x += 1; x @= y; x //= 2; x **= 2; x >>= 1; x <<= 1; x ^= 1; x |= 1; x &= 1; x %= 2
        try:
            pass
        except (A, B) as e:
            pass
        except:
            pass
        else:
            pass
        finally:
            pass
        with (a as b, c as (d, e)):
            pass
        """,
    "expressions": """\
        a = b if c else d
        e = not a or b and c or d
        f = a < b <= c != d is not e in f not in g
        g = [*a, b], {**c, "k": v}, {1, *s}, (y := 2)
        h = [x for x in y if z if w for v in x], {k: v for k, v in d}, {s for s in t}
        i = -a + ~b * c @ d / e // f % g ** h << i >> j & k | l ^ m
        j = (yield)
        k = await_ = lambda: (yield)
        """,
    "identifiers as written, not as Python normalizes them": """\
        ｔｈ = a.ｗｗｗ + µ  # é
        x = "é"; y = ｔｈ.b

        def f(x, y="é"):  # ü: non-ASCII next to a name written as it is
            import os as o  # ö
            return f(x=1)  # ä
        """,
}


@pytest.mark.parametrize("name", SNIPPETS)
def test_the_built_tree_has_libcsts_shape(name):
    assert differences(textwrap.dedent(SNIPPETS[name])) == []


@pytest.mark.parametrize(
    "snippet",
    [
        pytest.param(textwrap.dedent(s), id=f"{code}-{kind}-{i}")
        for code, rule in RULES.items()
        for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
        for i, s in enumerate(examples)
    ],
)
def test_every_rule_example_builds_libcsts_shape(snippet):
    assert differences(snippet) == []


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.py")), ids=lambda p: p.name)
def test_every_fixture_builds_libcsts_shape(path):
    assert differences(path.read_text(encoding="utf-8")) == []


def _stdlib_sample() -> list[Path]:
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    return files[::8]


@pytest.mark.parametrize("path", _stdlib_sample(), ids=lambda p: p.name)
def test_a_sample_of_the_standard_library_builds_libcsts_shape(path):
    source = path.read_text(encoding="utf-8")
    try:
        built = module_from_ast(source, ast.parse(source))
    except Unsupported:
        return  # the engine parses such a file with libcst straight away
    assert shape_differences(parse_module(source), built) == []


def test_the_comparison_notices_a_different_shape():
    """The oracle above can fail: a suite is not a block, ``else: if`` is not ``elif``."""
    parsed = parse_module("if a:\n    pass\nelif b:\n    pass\n")
    other = "if a:\n    pass\nelse:\n    if b:\n        pass\n"
    assert shape_differences(parsed, module_from_ast(other, ast.parse(other))) == [
        "module.body[0].orelse: If != Else"
    ]
    assert shape_differences(parse_module("x = 0x10\n"), parse_module("x = 16\n")) == [
        "module.body[0].body[0].value.value: '0x10' != '16'"
    ]


def test_nodes_are_libcsts_own_classes_with_every_field_set():
    source = "def f(a, b=1):\n    return g(a, key=b)[0]\n"
    module = module_from_ast(source, ast.parse(source))
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef) and isinstance(function.body, cst.IndentedBlock)
    call = function.body.body[0].body[0].value.value
    assert isinstance(call, cst.Call) and call.args[1].keyword.value == "key"
    assert not call.lpar and call.whitespace_after_func.deep_equals(cst.SimpleWhitespace(""))  # defaults, not missing
    # Code generation works (messages quote it), without the source's formatting; on the mirror
    # the screen's tree gives a sketch of the words instead (no libcst: see mirror_base.sketch).
    assert module.code_for_node(call) == ("g(a, key = b)" if cst.FAMILY == cst.LIBCST else "g a b key")


@pytest.mark.parametrize(
    "source",
    [
        "match x:\n    case 1:\n        pass\n",
        "def ｆ(): pass\n",
        "type Alias = int\n" if hasattr(ast, "TypeAlias") else "match y:\n    case _:\n        pass\n",
    ],
)
def test_syntax_the_builder_does_not_rebuild_is_refused(source):
    with pytest.raises(Unsupported):
        module_from_ast(source, ast.parse(source))
