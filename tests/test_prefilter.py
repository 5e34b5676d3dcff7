"""The gate before libcst (leaklint/prefilter.py): files whose syntax cannot hold a finding of the
enabled rules are not parsed with libcst, and the gate never hides a finding."""

from __future__ import annotations

import ast
import textwrap

import pytest

from conftest import ROOT

import leaklint.engine
from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Confidence
from leaklint.prefilter import describe_shape, may_hold_findings
from leaklint.registry import all_rules
from leaklint.testing import gate_differences

RULES = all_rules()
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
LEVELS = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)


def shape_of(source: str):
    source = textwrap.dedent(source)
    return describe_shape(ast.parse(source), source.lower())


def hidden_findings(source: str, path: str = "a.py") -> list[str]:
    """What the gate changes in a lint with every rule, at every confidence (nothing, it must
    only skip work)."""
    return gate_differences(source, path, list(RULES.values()))


# --- the gate never hides a finding ---------------------------------------------------------------
@pytest.mark.parametrize(
    "snippet",
    [pytest.param(textwrap.dedent(s), id=f"{code}-invalid-{i}") for code, rule in RULES.items() for i, s in enumerate(rule.INVALID)],
)
def test_no_finding_of_a_rule_example_is_hidden(snippet):
    assert hidden_findings(snippet) == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_no_finding_of_a_fixture_is_hidden(path):
    assert hidden_findings(path.read_text(encoding="utf-8"), str(path)) == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_gated_and_ungated_runs_agree_on_the_fixtures_at_the_default_confidence(path):
    """(tests/test_engine.py checks the same at low confidence.)"""
    text = path.read_text(encoding="utf-8")
    rules = list(RULES.values())
    settings = Settings(select=("ALL",))
    gated = lint_text(text, str(path), rules, settings)
    ungated = lint_text(text, str(path), rules, settings, gate=False)
    assert (gated.findings, gated.errors) == (ungated.findings, ungated.errors)


# --- it skips work --------------------------------------------------------------------------------
UTILITY = """\
import torch

def pad_to(x, size):
    out = x.new_zeros(size)
    out[: x.shape[0]] = x
    return out

class Config:
    def __init__(self, layers):
        self.layers = []
        for layer in layers:
            self.layers.append(layer)
"""


def test_a_torch_file_whose_syntax_holds_no_finding_is_not_parsed_with_libcst(monkeypatch):
    parsed = []
    monkeypatch.setattr(leaklint.engine, "_apply_rules", lambda *args: parsed.append(args) or ([], [], None))
    outcome = lint_text(UTILITY, "util.py", list(RULES.values()), Settings())
    assert outcome.findings == [] and outcome.errors == [] and parsed == []


def test_valid_python_that_libcst_cannot_parse_is_an_error_only_where_analysis_is_needed():
    source = "import torch\n(x): int = 1\n"
    assert lint_text(source, "a.py", list(RULES.values()), Settings()).errors == []
    [error] = lint_text(source, "a.py", list(RULES.values()), Settings(), gate=False).errors
    assert error.kind.value == "unsupported-syntax"


def test_only_the_rules_that_may_report_are_run():
    tree = ast.parse(UTILITY)
    assert may_hold_findings(UTILITY, tree, list(RULES.values()), Confidence.MEDIUM) == []
    # Low-confidence findings rest on names alone: the loop rules can no longer rule them out.
    low = {r.code for r in may_hold_findings(UTILITY, tree, list(RULES.values()), Confidence.LOW)}
    assert {"LL101", "LL102"} <= low


# --- what the shape sees, feature by feature ------------------------------------------------------
def test_a_loop_over_a_loader_or_with_a_backward_is_an_iteration_loop():
    assert shape_of("for x, y in train_loader:\n    pass\n").iteration_loop
    assert shape_of("for epoch in range(n):\n    pass\n").iteration_loop
    assert shape_of("while True:\n    loss.backward()\n").iteration_loop
    assert shape_of("from torch.autograd import grad as g\nfor p in ps:\n    g(out, p)\n").iteration_loop
    assert shape_of("preds = [f(x) for x in dataloader]\n").iteration_loop
    assert not shape_of("for head in self.heads:\n    out = head(out)\n").iteration_loop


def test_a_dataloader_makes_any_loop_a_possible_iteration_loop():
    source = "from torch.utils.data import DataLoader\nsource = DataLoader(ds)\nfor x in source:\n    pass\n"
    assert shape_of(source).iteration_loop


def test_state_kept_by_a_per_step_function():
    forward = """\
    class Net(nn.Module):
        def forward(self, x):
            self.last = self.fc(x)
            return self.last
    """
    assert shape_of(forward).per_step_state_store
    called_from_forward = """\
    class Net(nn.Module):
        def forward(self, x):
            return self._run(x)
        def _run(self, x):
            self.cache["x"] = x
            return x
    """
    assert shape_of(called_from_forward).per_step_state_store
    called_in_a_loop = """\
    class Explainer:
        def explain(self, image):
            self.last = self.model(image)
    for image in images:
        explainer.explain(image)
    """
    assert shape_of(called_in_a_loop).per_step_state_store  # a loop over inputs, whatever its names
    global_total = "def train_step(batch):\n    global total\n    total = total + model(batch)\n"
    assert shape_of(global_total).per_step_state_store
    # A name only ever fed from itself is not this function's own (it fails without `global`,
    # but the analysis still sees a sum that outlives the call).
    assert shape_of("def train_step(batch):\n    total += model(batch)\n").per_step_state_store
    assert not shape_of("def train_step(batch):\n    total = 0\n    total += model(batch)\n").per_step_state_store
    setup_only = """\
    class Net(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)
        def reset(self):
            self.fc = nn.Linear(2, 2)
        def forward(self, x):
            h = self.fc(x)
            h = h + x
            return h
    """
    assert not shape_of(setup_only).per_step_state_store


def test_containers_on_self_filled_outside_init():
    assert shape_of("class M:\n    def record(self, out):\n        self.outputs.append(out)\n").self_container_store
    assert not shape_of("class M:\n    def __init__(self, n):\n        for i in n:\n            self.layers.append(i)\n").self_container_store


def test_a_loop_filling_a_container_of_an_outer_scope():
    assert shape_of("def collect(items):\n    for x in items:\n        SEEN.append(model(x))\n").loop_outer_store
    assert not shape_of("def collect(items):\n    seen = []\n    for x in items:\n        seen.append(x)\n    return seen\n").loop_outer_store


def test_a_method_that_keeps_its_argument_called_per_step():
    meter = """\
    class Meter:
        def update(self, val):
            self.sum += val
    meter = Meter()
    def log(values):
        for v in values:
            meter.update(v)
    """
    assert shape_of(meter).argument_keeping_call
    assert not shape_of("class Meter:\n    def update(self, val):\n        self.sum += val\n").argument_keeping_call


def test_graph_evidence_needs_more_than_names():
    assert shape_of("loss = criterion(out, y)\n").graph_evidence
    assert shape_of("import torch.nn.functional as F\n").graph_evidence
    assert shape_of("model.eval()\n").graph_evidence
    assert shape_of("loss.backward()\n").graph_evidence
    assert not shape_of("import torch\nloss = compute(batch)\ntotal = total + loss\n").graph_evidence


def test_evaluation_code_and_except_clauses_and_inplace_candidates():
    assert shape_of("def validate(model, loader):\n    pass\n").eval_context
    assert not shape_of("def test_shapes():\n    pass\n").eval_context
    assert shape_of("try:\n    step()\nexcept RuntimeError:\n    retry()\n").oom_handler_call
    assert not shape_of("try:\n    step()\nexcept RuntimeError:\n    pass\n").oom_handler_call
    assert shape_of("x = x * 2\n").inplace_candidate
    assert shape_of("x = torch.relu(x)\n").inplace_candidate
    assert not shape_of("y = x * 2\n").inplace_candidate


@pytest.mark.parametrize(
    "source",
    [
        "x = F.relu(x)\n",
        "x = torch.nn.functional.dropout(x, 0.1)\n",
        "x = x.clamp(0, 1)\n",
        "x = torch.clamp(x, 0, 1)\n",
        "from torch import relu\nx = relu(x)\n",
        # an alias may be any of LL401's functions, even when imported after the call
        "def f(x):\n    x = act(x)\n    return x\nfrom torch.nn.functional import gelu, relu as act\n",
    ],
)
def test_calls_ll401_may_rewrite(source):
    assert shape_of(source).inplace_candidate


@pytest.mark.parametrize(
    "source",
    [
        "x = self.norm(x)\n",  # a layer: LL401 rewrites no module calls
        "x = layer(x)\n",
        "x = x.view(-1)\n",  # a view, not one of the functions with an in-place form
        "x = torch.cat(x, 1)\n",
        "from torch.nn.functional import gelu\nx = gelu(x)\n",
        "x = relu(y)\n",  # not the target's old value
    ],
)
def test_calls_ll401_never_rewrites(source):
    assert not shape_of(source).inplace_candidate


@pytest.mark.parametrize(
    "clause",
    [
        "except:",
        "except Exception:",
        "except (KeyError, RuntimeError) as error:",
        "except torch.cuda.OutOfMemoryError:",
        "except torch.OutOfMemoryError:",
        "except MemoryError:",
        "except BaseException:",
    ],
)
def test_except_clauses_that_may_catch_running_out_of_memory(clause):
    assert shape_of(f"try:\n    step()\n{clause}\n    retry()\n").oom_handler_call


def test_except_clauses_that_cannot_catch_running_out_of_memory():
    assert not shape_of("try:\n    import apex\nexcept ImportError:\n    apex = load()\n").oom_handler_call
    assert not shape_of("try:\n    v = d[k]\nexcept (KeyError, ValueError):\n    v = make()\n").oom_handler_call
    # a call after the clause, or in a def inside it, is not in the clause
    assert not shape_of("try:\n    f()\nexcept Exception:\n    def g():\n        h()\ng2()\n").oom_handler_call


def test_a_renamed_import_may_be_an_out_of_memory_class():
    source = "from torch.cuda import OutOfMemoryError as OOM\ntry:\n    step()\nexcept OOM:\n    retry()\n"
    assert shape_of(source).oom_handler_call
    # and so is anything nested in a clause that may catch it
    assert shape_of("try:\n    f()\nexcept Exception:\n    try:\n        g()\n    except KeyError:\n        retry()\n").oom_handler_call


@pytest.mark.parametrize(
    "source",
    [
        "model.eval()\nout = model(x)\n",
        "model.train(False)\nout = model(x)\n",
        "def run(self, x):\n    self.net.to(self.device).eval()\n    return self.net.forward(x)\n",
        "def run(model, xs):\n    model.eval()\n    return [model.module(x) for x in xs]\n",
    ],
)
def test_evaluation_mode_then_a_run_of_the_same_model(source):
    assert shape_of(source).eval_context


@pytest.mark.parametrize(
    "source",
    [
        "model.eval()\n",
        "model.eval()\nout = head(x)\n",
        "def setup(self):\n    self.model.eval()\ndef step(self, x):\n    return self.model(x)\n",
        "get_model().eval()\nout = f()(x)\n",
    ],
)
def test_evaluation_mode_without_a_run_of_that_model_in_the_same_function(source):
    """The analysis tracks evaluation mode per function run: a model put in evaluation mode in
    one method and run in another is not an LL201 finding (only an evaluation function's name is)."""
    assert not shape_of(source).eval_context


def test_only_a_chain_of_names_can_grow_itself():
    """``get().buf = torch.cat([other().part, x])`` grows nothing: neither side is a name chain."""
    source = "def step(xs):\n    for x in xs:\n        get().buf = torch.cat([other().part, x])\n"
    assert not shape_of(source).loop_outer_store
    grown = "def step(xs):\n    for x in xs:\n        state.buf = torch.cat([state.buf, x])\n"
    assert shape_of(grown).loop_outer_store


def test_identifiers_are_names_not_substrings():
    shape = shape_of("import collections\nfrom gc import collect as c\n")
    assert shape.uses("collect") and shape.uses("collections")
    assert not shape_of("import collections\n").uses("collect")


def test_any_loop_or_comprehension_is_a_loop():
    assert shape_of("while True:\n    pass\n").has_loop
    assert shape_of("xs = [x for x in range(3)]\n").has_loop
    assert not shape_of("x = build()\n").has_loop


def test_the_tensorflow_rules_need_an_import_of_tensorflow_or_keras():
    tf_rules = [RULES[code] for code in ("LL501", "LL502", "LL503")]
    mention = "# this module is not for tensorflow users\nfor x in loader:\n    y = model.predict(x)\n"
    assert may_hold_findings(mention, ast.parse(mention), tf_rules, Confidence.LOW) == []
    imported = "import tensorflow as tf\n" + mention
    assert may_hold_findings(imported, ast.parse(imported), tf_rules, Confidence.LOW) == tf_rules[:1] + tf_rules[2:]


# --- the pass's child listing --------------------------------------------------------------------
_TRICKY_CHILDREN = """\
def f(a, /, b=1, *args, c, d=2, **kw) -> int:
    global g
    return {**kw, "x": a}, [*args], (lambda q=3: q)(), f"{a!r:>{b}}"
async def h():
    async with a as b, c:
        async for x in y:
            await z
    try:
        pass
    except* ValueError as e:
        raise
match p:
    case [1, *rest] | {"k": v, **more} if v: pass
    case Point(x=0, y=yy) as pt: pass
x[1:2, ::3] = yield_ = not a < b <= c
"""


def test_the_pass_lists_the_same_children_as_a_look_at_every_field():
    """The child lister written per node class from its signature reads what the generic one reads."""
    from leaklint import prefilter

    sources = [_TRICKY_CHILDREN] + [path.read_text() for path in sorted((ROOT / "fixtures").rglob("*.py"))]
    sources += [path.read_text() for path in sorted(ROOT.joinpath("leaklint").rglob("*.py"))]
    kinds = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            kinds.add(type(node))
            assert prefilter._child_nodes(node) == prefilter._generic_child_nodes(node), ast.dump(node)
    assert {ast.Dict, ast.arguments, ast.MatchMapping, ast.TryStar, ast.JoinedStr} <= kinds
    generic = [kind.__name__ for kind in kinds if prefilter._CHILDREN_OF[kind] is prefilter._generic_child_nodes]
    assert generic == []


# --- comments decide nothing ----------------------------------------------------------------------
#: Words a rule that read code text (comments included) might look for: the screen's tree has no
#: comments, so any decision they swayed would differ between the screened and the exact run.
_TEMPTING_COMMENT = "  # param loss model grad no_grad detach eval train step backward zero_grad oom out of memory"


def _tokens_outside_fstrings(source: str):
    """``source``'s tokens, less those inside f-strings (Python 3.12+ tokenizes f-strings, where a
    space or a line break in a replacement field's format spec would change the string)."""
    import io
    import tokenize

    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == fstring_start:
            depth += 1
        elif token.type == fstring_end:
            depth -= 1
        elif not depth:
            yield token


def _insert(source: str, inserts: list[tuple[int, int, str]]) -> str:
    """``source`` with each text inserted at its (row, column)."""
    lines = source.splitlines(keepends=True)
    for row, column, text in sorted(inserts, reverse=True):
        if row <= len(lines):
            line = lines[row - 1]
            lines[row - 1] = line[:column] + text + line[column:]
    return "".join(lines)


def with_comments(source: str) -> str:
    """``source`` with a comment at the end of every line that can take one (blank lines and lines
    inside brackets included) and a commented line break after every opening bracket, so that
    comments land inside expressions too; the code is unchanged."""
    import tokenize

    commented_lines = set()
    inserts = []
    for token in _tokens_outside_fstrings(source):
        if token.type == tokenize.COMMENT:
            commented_lines.add(token.start[0])
        elif token.type in (tokenize.NEWLINE, tokenize.NL) and token.start[0] not in commented_lines:
            inserts.append((*token.start, _TEMPTING_COMMENT))
        elif token.type == tokenize.OP and token.string in "([{":
            inserts.append((*token.end, _TEMPTING_COMMENT + "\n"))
    return _insert(source, inserts)


def test_the_comment_maker_comments_every_line_and_inside_brackets_and_keeps_the_code():
    source = "x = f(\n    1,\n\n)  # kept\ny = 2\n"
    commented = with_comments(source)
    assert commented.count("# param") == 5 and "# kept" in commented
    assert commented.startswith("x = f(  # param")
    assert ast.dump(ast.parse(commented)) == ast.dump(ast.parse(source))


def with_spaces(source: str) -> str:
    """``source`` with a space after every operator and bracket outside f-strings (``d[ "k" ]``,
    ``x . y``): spacing the built tree does not have either; the code is unchanged."""
    import tokenize

    return _insert(source, [(*token.end, " ") for token in _tokens_outside_fstrings(source) if token.type == tokenize.OP])


def test_the_space_maker_spaces_operators_and_keeps_the_code():
    source = 'd["k"] = d.get("k", 0) + x.y\n'
    assert with_spaces(source) == 'd[ "k"]  =  d. get( "k",  0)  +  x. y\n'


_EQUIVALENCE_SOURCES = (
    [pytest.param(path.read_text(encoding="utf-8"), id=path.name) for path in FIXTURES]
    + [
        pytest.param(textwrap.dedent(s), id=f"{code}-{kind}-{i}")
        for code, rule in RULES.items()
        for kind, snippets in (("invalid", rule.INVALID), ("valid", rule.VALID))  # valid: low-confidence ones too
        for i, s in enumerate(snippets)
    ]
)


@pytest.mark.parametrize("source", _EQUIVALENCE_SOURCES)
def test_comments_everywhere_hide_no_finding(source):
    commented = with_comments(source)
    assert ast.dump(ast.parse(commented)) == ast.dump(ast.parse(source))
    assert hidden_findings(commented, "train.py") == []


@pytest.mark.parametrize("source", _EQUIVALENCE_SOURCES)
def test_spaces_everywhere_hide_no_finding(source):
    """(``deep_equals`` compares spacing too: on the built tree, without any, it matches more.)"""
    spaced = with_spaces(source)
    assert ast.dump(ast.parse(spaced)) == ast.dump(ast.parse(source))
    assert hidden_findings(spaced, "train.py") == []
