"""The node mirror (leaklint/analysis/mirror.py): libcst's classes without libcst's import cost.

The mirror must be libcst to every reader: the same class names, bases, fields and defaults, the
same ``deep_equals``, ``with_changes`` and ``evaluated_value``, and trees that convert both ways
without losing a character. The ``leaklint`` command analyses with it (``LEAKLINT_NODES=mirror``);
the last tests run the engine-level suites again in a process that does too.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst
import pytest

from conftest import ROOT

from leaklint.analysis import family, mirror
from leaklint.analysis import nodes
from leaklint.analysis.convert import code_for_node, to_libcst, to_mirror
from leaklint.analysis.mirror_base import CSTNode, MaybeSentinel, sketch
from leaklint.registry import all_rules
from leaklint.analysis.node_fields import field_names

sys.path.insert(0, str(ROOT / "tools"))
import generate_mirror  # noqa: E402

FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
EXAMPLES = [textwrap.dedent(s) for rule in all_rules().values() for s in (*rule.VALID, *rule.INVALID)]
SOURCES = [path.read_text(encoding="utf-8") for path in FIXTURES] + EXAMPLES
LIBCST_CLASSES = {
    name: value for name, value in vars(libcst).items() if inspect.isclass(value) and issubclass(value, libcst.CSTNode)
}


def libcst_nodes(tree: libcst.CSTNode) -> list[libcst.CSTNode]:
    found: list[libcst.CSTNode] = []
    pending: list[object] = [tree]
    while pending:
        value = pending.pop()
        if isinstance(value, libcst.CSTNode):
            found.append(value)
            pending.extend(getattr(value, f.name) for f in dataclasses.fields(value))
        elif isinstance(value, (list, tuple)):
            pending.extend(value)
    return found


def without_origins(node: object) -> object:
    """A copy of a mirror tree that no node of libcst's stands behind: every node is rebuilt."""
    if isinstance(node, CSTNode):
        return type(node)(**{name: without_origins(getattr(node, name)) for name in node._fields})
    if isinstance(node, (list, tuple)):
        return type(node)(without_origins(item) for item in node)
    return node


# --- the generated module --------------------------------------------------------------------
@pytest.mark.skipif(nodes.FAMILY == nodes.MIRROR, reason="the mirror is generated from libcst's classes")
def test_the_mirror_is_what_the_generator_writes_for_the_installed_libcst():
    if mirror.LIBCST_VERSION != libcst.LIBCST_VERSION:
        pytest.skip(f"mirror from libcst {mirror.LIBCST_VERSION}, libcst {libcst.LIBCST_VERSION} installed: run tools/generate_mirror.py")
    written = (ROOT / "leaklint" / "analysis" / "mirror.py").read_text(encoding="utf-8")
    assert written == generate_mirror.generate(), "leaklint/analysis/mirror.py is stale: run python tools/generate_mirror.py"


def test_every_libcst_class_has_a_mirror_with_its_fields_and_defaults():
    for name, libcst_class in LIBCST_CLASSES.items():
        mirror_class = getattr(mirror, name, None) if name != "CSTNode" else CSTNode
        assert mirror_class is not None, name
        if inspect.isabstract(libcst_class) or libcst_class is libcst.CSTNode:
            continue
        libcst_fields = [f.name for f in dataclasses.fields(libcst_class)]
        assert list(mirror_class._fields) == libcst_fields, name
        signature = inspect.signature(mirror_class)
        for field in dataclasses.fields(libcst_class):
            default = signature.parameters[field.name].default
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                assert default is inspect.Parameter.empty, (name, field.name)
                continue
            expected = field.default if field.default is not dataclasses.MISSING else field.default_factory()
            assert same_value(default, expected), (name, field.name)


def same_value(mirrored: object, expected: object) -> bool:
    """A mirror value against a libcst one: nodes by ``deep_equals``, sequences item by item."""
    if isinstance(expected, libcst.CSTNode):
        return to_libcst(mirrored).deep_equals(expected)
    if isinstance(expected, (list, tuple)):
        return type(mirrored) is type(expected) and len(mirrored) == len(expected) and all(map(same_value, mirrored, expected))
    if expected is libcst.MaybeSentinel.DEFAULT:
        return mirrored is MaybeSentinel.DEFAULT
    return mirrored == expected


def test_the_class_hierarchy_is_libcsts():
    """``isinstance(node, cst.BaseExpression)`` must answer the same for both families."""
    for first_name, first in LIBCST_CLASSES.items():
        for second_name, second in LIBCST_CLASSES.items():
            mirrored = issubclass(getattr(mirror, first_name, CSTNode), getattr(mirror, second_name, CSTNode))
            assert mirrored == issubclass(first, second), (first_name, second_name)


@pytest.mark.skipif(nodes.FAMILY == nodes.MIRROR, reason="the mirror is generated from libcst's classes")
def test_the_walk_plan_of_each_class_is_the_one_worked_out_for_libcst():
    from leaklint.analysis.walk import _child_fields

    for name, libcst_class in LIBCST_CLASSES.items():
        if not inspect.isabstract(libcst_class) and libcst_class is not libcst.CSTNode:
            assert getattr(mirror, name)._child_fields == _child_fields(libcst_class), name


def test_importing_the_mirror_imports_no_libcst():
    code = "import sys, leaklint.analysis.mirror; print('libcst' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "False"


# --- conversions -------------------------------------------------------------------------------
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_a_converted_tree_points_back_at_libcsts_nodes(path):
    parsed = libcst.parse_module(path.read_text(encoding="utf-8"))
    converted = to_mirror(parsed)
    assert to_libcst(converted) is parsed
    pairs = [(converted, parsed)]
    while pairs:
        mirrored, original = pairs.pop()
        assert mirrored.origin is original and type(mirrored).__name__ == type(original).__name__
        for name in mirrored._fields:
            left, right = getattr(mirrored, name), getattr(original, name)
            if isinstance(right, libcst.CSTNode):
                pairs.append((left, right))
            elif isinstance(right, (list, tuple)):
                assert type(left) is type(right) and len(left) == len(right)
                pairs.extend((a, b) for a, b in zip(left, right) if isinstance(b, libcst.CSTNode))
            elif right is libcst.MaybeSentinel.DEFAULT:
                assert left is MaybeSentinel.DEFAULT
            else:
                assert left == right


@pytest.mark.parametrize("source", SOURCES[:40] + SOURCES[len(FIXTURES) :: 7])
def test_a_tree_rebuilt_without_origins_generates_the_same_source(source):
    converted = to_mirror(libcst.parse_module(source))
    rebuilt = without_origins(converted)
    assert code_for_node(converted, rebuilt) == source


def test_a_field_another_libcst_release_lacks_takes_the_mirrors_default():
    """Converters are written from the fields both classes have: a release without ``lpar`` on
    ``Name`` (a made-up one here) still converts, the field at its default."""
    from leaklint.analysis.convert import _converter, _mirror_value

    @dataclasses.dataclass(frozen=True)
    class Name:
        value: str

    converted = _converter(Name, mirror.Name, _mirror_value)(Name("x"))
    assert (converted.value, converted.lpar, converted.rpar) == ("x", (), ())


def test_code_for_a_node_a_rule_builds():
    module = to_mirror(libcst.parse_module("x = torch.add(x, y)\n"))
    call = module.body[0].body[0].value
    method = mirror.Call(mirror.Attribute(mirror.Name("x"), mirror.Name("add_")), args=call.args[1:])
    assert module.code_for_node(method) == "x.add_(y)"
    assert module.code_for_node(call.with_changes(func=mirror.Name("mul"))) == "mul(x, y)"


# --- behaviour the analysis relies on ----------------------------------------------------------
def test_deep_equals_agrees_with_libcst():
    source = "a[0] += f(x, y=1)\nb[0] += f(x, y=1)\nc = f(x,  y=1)\nd = f(x, y=2)\ne = [1, 2]\ng = (1, 2)\n"
    first, second = libcst_nodes(libcst.parse_module(source)), libcst_nodes(libcst.parse_module(source))
    for left in first[::3]:
        for right in second[::5]:
            assert to_mirror(left).deep_equals(to_mirror(right)) == left.deep_equals(right)


def test_literals_evaluate_as_libcst_evaluates_them():
    source = "a = 0x1F + 1_000 + 2.5e3 + 3j\nb = 'x' 'y'\nc = b'x' b'y'\nd = 'x' f'{y}'\nf = r'\\d+'\n"
    for original in libcst_nodes(libcst.parse_module(source)):
        if hasattr(original, "evaluated_value"):
            assert to_mirror(original).evaluated_value == original.evaluated_value, type(original).__name__


def test_with_changes_copies_every_other_field():
    call = to_mirror(libcst.parse_module("f(a, b)\n")).body[0].body[0].value
    changed = call.with_changes(args=call.args[:1])
    assert [getattr(changed, name) for name in changed._fields if name != "args"] == [
        getattr(call, name) for name in call._fields if name != "args"
    ]
    assert changed.args == call.args[:1] and getattr(changed, "origin", None) is None
    assert field_names(type(changed)) == field_names(type(call.origin))


def test_a_sketch_keeps_the_words_and_drops_the_layout():
    built = mirror.Call(mirror.Attribute(mirror.Name("x"), mirror.Name("add_")), args=(mirror.Arg(mirror.Integer("1")),))
    assert sketch(built) == "x add_ 1"


# --- the analysis on the mirror ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("environment_says", "family_used"),
    [(None, "mirror"), ("libcst", "libcst")],  # the command's own choice; one the environment names is kept
)
def test_the_command_line_analyses_with_the_mirror_unless_told(tmp_path: Path, environment_says, family_used):
    (tmp_path / "train.py").write_text("import torch\n")
    code = (
        "import os\nfrom leaklint.cli import run\n"
        "try:\n    run(['--no-cache', 'train.py'], standalone_mode=False)\nfinally:\n"
        "    print(os.environ.get('LEAKLINT_NODES'))\n"
    )
    environment = {k: v for k, v in os.environ.items() if k != "LEAKLINT_NODES"}
    if environment_says is not None:
        environment["LEAKLINT_NODES"] = environment_says
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=environment)
    assert done.stdout.strip().splitlines()[-1] == family_used, done.stderr


def test_another_libcst_release_than_the_mirrored_one_gets_libcsts_classes():
    code = (
        "import leaklint.analysis.family as family\n"
        "family.installed_libcst_version = lambda: '0.1'\n"
        "from leaklint.analysis import nodes\nprint(nodes.FAMILY)\n"
    )
    environment = {**os.environ, "LEAKLINT_NODES": "mirror"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, cwd=ROOT)
    assert done.stdout.strip() == "libcst", done.stderr
    assert family.installed_libcst_version() == libcst.LIBCST_VERSION


def test_this_process_chose_its_family_from_the_environment():
    assert nodes.FAMILY == os.environ.get("LEAKLINT_NODES", "libcst")


#: The suites that run through the engine, not on hand-made libcst trees: they must pass with
#: either family. (This file's own checks of the screen's sketch run there too.)
ENGINE_SUITES = (
    "test_rule_examples.py", "test_fixtures.py", "test_screen.py", "test_from_ast.py", "test_rule_fixes.py",
    "test_fix.py", "test_suppressions.py", "test_prefilter.py", "test_mirror.py",
)


@pytest.mark.skipif(nodes.FAMILY == nodes.MIRROR, reason="this is the run on the mirror")
def test_the_engine_suites_pass_on_the_mirror():
    environment = {**os.environ, "LEAKLINT_NODES": "mirror"}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *ENGINE_SUITES]
    done = subprocess.run(command, cwd=ROOT / "tests", env=environment, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


@pytest.mark.skipif(nodes.FAMILY != nodes.MIRROR, reason="the screen's sketch exists only on the mirror")
def test_the_screen_decides_the_same_with_libcsts_code_generation(monkeypatch):
    """On the screen's tree rules get a sketch for source text (no libcst): what they report
    and how sure they are must not depend on it, only their messages and fixes may."""
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.from_ast import module_from_ast
    from leaklint.analysis.mirror_base import ModuleMethods
    from leaklint.analysis.walk import children_cached

    def verdicts(source: str) -> list[tuple[str, str, object]]:
        found = []
        with children_cached():
            facts = ModuleFacts(module_from_ast(source, ast.parse(source)))
            for rule in all_rules().values():
                found += [(rule.code, type(v.node).__name__, v.confidence) for v in rule().check(facts)]
            facts.release()
        return found

    sketched = [verdicts(source) for source in SOURCES]
    assert sum(map(len, sketched)) > len(FIXTURES), "the check is vacuous: rules fire on the examples"
    monkeypatch.setattr(ModuleMethods, "code_for_node", lambda module, node: code_for_node(module, node))
    generated = [verdicts(source) for source in SOURCES]
    assert [(i, v) for i, v in enumerate(generated) if v != sketched[i]] == []
