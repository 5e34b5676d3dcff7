"""LL104 retain-graph-in-loop: ``backward(retain_graph=True)`` where no later backward needs the graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.carry import CarriedState, bounded_carries, carried_states
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.structure import FunctionInfo, LoopInfo, backward_calls, backward_target, bound_names, names_bound_in
from leaklint.analysis.syntax import keyword_is_true
from leaklint.analysis.torch_api import TORCH_CODE
from leaklint.analysis.values import Kind
from leaklint.analysis.walk import calls_in, children, not_into_scopes, walk
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import SuggestedFix, drop_argument
from leaklint.gate import Words
from leaklint.rule import Measured, Rule, Violation


class RetainGraphInLoop(Rule):
    code = "LL104"
    name = "retain-graph-in-loop"
    severity = Severity.PEAK
    fixable = True
    summary = "backward(retain_graph=True) in a loop where no later backward goes through the graph it keeps."
    help = "drop retain_graph=True: it is only needed when a second backward goes through the same graph"
    needs = TORCH_CODE & Words("retain_graph")
    autograd = True
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(6, 0))
    docs = """
## What it finds
`loss.backward(retain_graph=True)`, `torch.autograd.backward(..., retain_graph=True)`,
`torch.autograd.grad(..., retain_graph=True)`, `scaler.scale(loss).backward(retain_graph=True)` or
`accelerator.backward(loss, retain_graph=True)` inside a loop, when no later backward goes through
the graph it keeps:

- it is the last backward of the iteration and the graph it differentiates is built in that
  iteration;
- a later backward of the iteration only goes through other graphs: followed statement by
  statement, a name re-bound in between holds a new graph and `.detach()` cuts
  (`D(fake.detach())` after `g_loss.backward(retain_graph=True)` in a GAN step);
- the loop backpropagates, one iteration after the other, through a graph built before the loop
  (the losses of one forward pass, one per layer or per task; a Jacobian row by row) and keeps it
  on every iteration, the last one included, with no backward after the loop that needs it
  (medium confidence): only the iterations before the last need `retain_graph`.

When the loop also carries a graph-attached value into the next iteration without `.detach()` (the
LL103 situation, typically an RNN hidden state), the message says so: the retained graphs then
chain up and memory grows every iteration.

## Why it matters
`backward()` frees the buffers the graph saved for the backward pass (the activations) as it goes;
`retain_graph=True` keeps them. That is what you want when a second backward goes through the same
graph (two losses sharing a trunk, a GAN whose generator output feeds the discriminator loss and the
generator loss), but on the last backward of an iteration it only keeps a whole forward pass of
activations alive until the next iteration rebinds the names: the peak memory of a step can double.
It is often added to silence "Trying to backward through the graph a second time", which usually
means a value from the previous iteration (a hidden state, a running statistic) still carries its
graph; then every retained graph stays reachable from the next one, and memory and the time of each
backward grow without bound. Detach the carried value instead.

## Example
```python
hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward(retain_graph=True)
    optimizer.step()
```

## Use instead
```python
hidden = model.init_hidden(batch_size)
for data, targets in batches:
    optimizer.zero_grad()
    hidden = tuple(h.detach() for h in hidden)
    output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward()
    optimizer.step()
```

## Fix safety
The fix drops the argument: `loss.backward(retain_graph=True)` becomes `loss.backward()`, and
the same for `torch.autograd.grad`, `torch.autograd.backward` and `accelerator.backward`.
**Unsafe**: if a later backward goes through the same graph in a way leaklint cannot see (a
helper called afterwards, a hook), it now fails with "Trying to backward through the graph a
second time". No fix while a carried state links the iterations' graphs (the message names it):
dropping `retain_graph` alone would make the second iteration fail. Detach the state first
(LL103's fix does), and the next `--fix` pass drops `retain_graph=True`. No fix either for a loop
over a graph built before it: every iteration but the last needs `retain_graph`, so the flag must
become `retain_graph=i < n - 1` (or the losses summed into one backward), which depends on how the
loop counts. Only the argument and
its comma are removed, so a call written over several lines keeps its layout (a call left with no
argument closes up: `loss.backward()`); an argument with a comment next to it — on its line, or
between it and the argument or parenthesis beside it — gets no fix, since the comment would end up
describing another line.

## Known false positives
A backward after the retaining one in the same iteration that goes through part of the same graph
(`loss1.backward(retain_graph=True); loss2.backward()` with a shared trunk, a GAN whose generator
output feeds both losses undetached) is the legitimate two-losses-one-graph use and not reported;
leaklint follows names, so a graph shared through an object's attribute or a container it cannot
see into counts as not shared. A call with `create_graph=True` (higher-order gradients: gradient
penalties, meta-learning keep the graph on purpose) is not reported, and neither is a loop that
keeps a state with its graph for a few iterations and then re-initialises it
(`if step % k == 0: hidden = None`): the next backward goes through the retained graph by design.
A loop over a graph built before it (a Jacobian row by row, one backward per class of a saliency
map, one per auxiliary loss) is reported at medium confidence for its last iteration. Gradients
taken as values (`torch.autograd.grad`, a Jacobian row by row) in a function that returns right
after the loop (a `return` of no graph, or the loop ends the body) are not reported: the graph,
built from locals, dies with the frame one statement later. A `.backward()` loop that returns right
after (per-layer distillation losses backpropagated one by one in a training step) is still
reported: summing the losses into one backward is the remedy, and leaklint does not weigh the
short time the graph outlives the loop. A backward
after the loop (or later in an enclosing loop) is taken to need the graph and silences it. A
`retain_graph` flag that is not the literal `True` (`retain_graph=i < n - 1`) is not reported.
Other backward calls earlier in the same iteration lower the confidence to medium: leaklint cannot
always tell whether they share the graph. Outside a loop, `retain_graph=True` costs one step's
activations once and is not reported. On bench/realcode the rule reports nothing: its
`retain_graph=True` calls (GAN and RL training steps, gradient penalties) are followed by a
backward through the same graph in the same step.

## References
- `torch.Tensor.backward`, `retain_graph` ("Note that in nearly all cases setting this option to
  True is not needed and often can be worked around in a much more efficient way"):
  https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
- "Memory blow up when setting retain_graph = True" (only the backward calls before the last one
  need it): https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/9
- An auxiliary-loss balancer calling `loss.backward(retain_graph=True)` for every loss in a loop,
  its memory growing until it crashes: https://github.com/facebookresearch/MetaBalance/issues/2
- A talking-heads GAN retaining the generator's graph every step although the discriminator's
  backward only uses detached fakes: https://github.com/grey-eye/talking-heads/pull/7
- An RNN trained with `retain_graph=True` on every step, asking about memory explosion and slowdown:
  https://github.com/isds-neu/PeRCNN/issues/3
- `retain_graph=True` added to silence "Trying to backward through the graph a second time" for a
  memory carried across segments; detaching the memory removed the need:
  https://github.com/jlamprou/Infini-Attention/issues/3
- `torch.autograd.grad`, `retain_graph`: https://pytorch.org/docs/stable/generated/torch.autograd.grad.html
- Runtime repro: `leaklint verify LL104` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
for x, y in loader:
    optimizer.zero_grad()
    features = model.trunk(x)
    loss1 = criterion(model.head1(features), y)
    loss2 = criterion(model.head2(features), y)
    loss1.backward(retain_graph=True)
    loss2.backward()
    optimizer.step()
""",
        """
import torch
for real, _ in loader:
    real.requires_grad_(True)
    d_out = netD(real)
    grads = torch.autograd.grad(d_out.sum(), real, create_graph=True, retain_graph=True)[0]
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    (d_out.mean() + 10 * penalty).backward()
""",
        """
losses = [criterion(head(features), y) for head in heads]
for i, loss in enumerate(losses):
    loss.backward(retain_graph=i < len(losses) - 1)
""",
        """
out = model(x)
loss = criterion(out, y)
loss.backward(retain_graph=True)
""",
        """
import torch.nn as nn
lstm = nn.LSTM(8, 8)
hidden = None
for step, (x, y) in enumerate(loader):
    if step % 4 == 0:
        hidden = None
    out, hidden = lstm(x, hidden)
    ((out - y) ** 2).mean().backward(retain_graph=True)
""",
        # the shared graph is still needed after the loop
        """
for x, y in loader:
    features = model.trunk(x)
    for head in heads:
        criterion(head(features), y).backward(retain_graph=True)
    criterion(model.head(features), y).backward()
""",
        # the discriminator's loss goes through the retained generator graph (fake is not detached)
        """
for real in loader:
    fake = netG(torch.randn(64, 100))
    g_loss = criterion(netD(fake), ones)
    g_loss.backward(retain_graph=True)
    d_loss = criterion(netD(real), ones) + criterion(netD(fake), zeros)
    d_loss.backward()
""",
        """
import torch
from torch.autograd import grad
def influence(model, src):
    x = src.clone().requires_grad_()
    out = model(x).sum(dim=-1)
    rows = []
    for j in range(src.size(0)):
        rows.append(grad([out[j]], [x], retain_graph=True)[0])
    return torch.stack(rows, dim=0)  # the graph dies with the frame right here
""",
    )
    INVALID = (
        """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)  # expect: LL104
    optimizer.step()
""",
        # the last row (or class) retains the shared graph too
        """
import torch
x.requires_grad_(True)
y = model(x)
rows = []
for i in range(y.size(0)):
    grad, = torch.autograd.grad(y[i], x, retain_graph=True)  # expect: LL104
    rows.append(grad)
""",
        """
for x, y in loader:
    out = model(x)
    for c in range(out.size(1)):
        model.zero_grad()
        out[:, c].sum().backward(retain_graph=True)  # expect: LL104
""",
        # a later backward that does not go through the retained graph (the fake is detached)
        """
import torch
for real in loader:
    fake = netG(torch.randn(64, 100))
    g_loss = criterion(netD(fake), ones)
    g_loss.backward(retain_graph=True)  # expect: LL104
    d_loss = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
    d_loss.backward()
""",
        """
def train(model, batches, criterion, optimizer):
    hidden = model.init_hidden(20)
    for data, targets in batches:
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward(retain_graph=True)  # expect: LL104
        optimizer.step()
""",
        """
import torch
for real in loader:
    fake = netG(torch.randn(64, 100))
    d_loss = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
    d_loss.backward()
    optD.step()
    g_loss = criterion(netD(fake), ones)
    g_loss.backward(retain_graph=True)  # expect: LL104
    optG.step()
""",
        """
import torch
for step, (x, y) in enumerate(loader):
    scaler.scale(criterion(model(x), y)).backward(retain_graph=True)  # expect: LL104
    scaler.step(optimizer)
    scaler.update()
""",
        """
import torch
from torch.autograd import grad
def influence(model, src):
    x = src.clone().requires_grad_()
    out = model(x).sum(dim=-1)
    rows = []
    for j in range(src.size(0)):
        rows.append(grad([out[j]], [x], retain_graph=True)[0])  # expect: LL104
    return torch.stack(rows, dim=0), out  # the output keeps the graph alive for the caller
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """`loss.backward(retain_graph=True)` with nothing else going through the graph, vs plain backward."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(ctx.device)
            ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.01)
            ctx.x = torch.randn(256, 64, device=ctx.device)
            ctx.y = torch.randint(0, 10, (256,), device=ctx.device)
            ctx.loss = None

        def _forward(self, ctx):
            import torch.nn.functional as F
            ctx.optimizer.zero_grad()
            ctx.loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)

        def leaky(self, ctx):
            self._forward(ctx)
            ctx.loss.backward(retain_graph=True)
            ctx.optimizer.step()

        def fixed(self, ctx):
            self._forward(ctx)
            ctx.loss.backward()
            ctx.optimizer.step()


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    for fact in facts.statements():
        if not fact.loops:
            continue
        for call in _retaining_calls(fact, facts):
            finding = _judge(facts, fact, call)
            if finding is not None:
                yield finding


def _retaining_calls(fact: StatementFact, facts: ModuleFacts) -> Iterator[cst.Call]:
    """Backward calls in the statement with a literal ``retain_graph=True`` (not ``create_graph=True``)."""
    for call in calls_in(fact.node):
        if backward_target(call, facts.imports) is not None:
            if keyword_is_true(call, "retain_graph") and not keyword_is_true(call, "create_graph"):
                yield call


@dataclass(frozen=True)
class _Situation:
    """Where the retaining call stands in its iteration."""

    later_backward: bool
    earlier_backward: bool


def _situation(loop: LoopInfo, call: cst.Call, facts: ModuleFacts) -> _Situation:
    calls = backward_calls(loop.node.body, facts.imports)
    position = next((i for i, c in enumerate(calls) if c is call), len(calls))
    return _Situation(later_backward=position < len(calls) - 1, earlier_backward=position > 0)


def _judge(facts: ModuleFacts, fact: StatementFact, call: cst.Call) -> Violation | None:
    loop = fact.loops[-1]
    situation = _situation(loop, call, facts)
    if situation.later_backward and _later_backward_shares_graph(facts, loop, fact, call):
        return None  # a second backward through the same graph: what retain_graph is for
    target = backward_target(call, facts.imports)
    assert target is not None
    bound_in_loop = _bound_in(loop)
    deps = facts.value(target).deps | _inputs_in_loop(target, loop)
    built_here = _built_in_iteration(target, bound_in_loop, facts)
    if not built_here or any(_graph_from_before(facts, fact, loop, name) for name in deps - bound_in_loop):
        # Each iteration backpropagates through a graph built before the loop (losses of one
        # forward, a Jacobian row by row): the next iteration needs it, the last one does not.
        return _retained_after_loop(facts, fact, call, loop, target)
    if deps & bounded_carries(facts, loop):
        return None  # a state kept with its graph for k steps, then reset: the next backward needs it
    carried = _carried_into(facts, fact, deps)
    if carried:
        names = " and ".join(f"'{c.name}'" for c in carried)
        return Violation(
            node=fact.node,
            message=(
                f"retain_graph=True keeps the graph of '{facts.describe(target)}' alive, and {names} "
                f"{'carry' if len(carried) > 1 else 'carries'} the graph into the next iteration, so every "
                "retained graph stays reachable: memory grows every iteration"
            ),
            confidence=Confidence.HIGH,
            help=f"detach {names} between iterations ({carried[0].name} = {carried[0].name}.detach()) and drop retain_graph=True",
            statement=fact.line,
        )
    return Violation(
        node=fact.node,
        message=(
            f"retain_graph=True on the last backward of the iteration keeps the graph of '{facts.describe(target)}' "
            "and its saved activations alive until the next iteration replaces them"
        ),
        confidence=Confidence.MEDIUM if situation.earlier_backward else Confidence.HIGH,
        help=None,
        statement=fact.line,
        fix=_drop_retain_graph(facts, call),
    )


def _retained_after_loop(facts: ModuleFacts, fact: StatementFact, call: cst.Call, loop: LoopInfo, target: cst.BaseExpression) -> Violation | None:
    """``for loss in losses: loss.backward(retain_graph=True)``: every iteration but the last needs
    the shared graph kept; the last keeps it too, so its saved activations outlive the loop until
    the last reference to the graph goes, unless a backward after the loop still goes through it."""
    if _backward_after(facts, fact.function, loop) or _returns_after(facts, fact, call, loop, target):
        return None
    return Violation(
        node=fact.node,
        message=(
            f"retain_graph=True on every iteration, the last one included: the graph that '{facts.describe(target)}' "
            "shares with the other iterations keeps its saved activations after the loop, until its last reference "
            "goes, instead of being freed by the last backward"
        ),
        confidence=Confidence.MEDIUM,
        help="retain the graph on all but the last iteration (retain_graph=i < n - 1), or sum the losses and call backward once",
        statement=fact.line,
    )


def _returns_after(facts: ModuleFacts, fact: StatementFact, call: cst.Call, loop: LoopInfo, target: cst.BaseExpression) -> bool:
    """Gradients taken as values (``torch.autograd.grad``, a Jacobian built row by row) and the
    function returns right after ``loop`` (the next statement is a ``return`` of no graph, or the
    loop ends the body): the retained graph, built from locals, dies with the frame one statement
    later, so nothing outlives the loop with it. A ``.backward()`` loop (losses backpropagated one
    by one into the parameters) stays reported: summing them into one backward is the remedy."""
    if facts.imports.resolve(call.func) != "torch.autograd.grad":
        return False
    if any("." in name for name in facts.value(target).deps):
        return False  # built from an attribute: it may live on with the object
    place = facts.index.place_of(fact)
    chain = place.chain if place is not None else ()
    position = next((index for index, node in enumerate(chain) if node is loop.node), None)
    if position is None or position < 2 or not isinstance(chain[position - 1], cst.IndentedBlock):
        return False
    block, owner = chain[position - 1], chain[position - 2]
    body = list(block.body)
    following = body[body.index(loop.node) + 1 :] if loop.node in body else None
    if following is None:
        return False
    if not following:
        return isinstance(owner, cst.FunctionDef) and owner.body is block
    after = following[0]
    if not isinstance(after, cst.SimpleStatementLine) or not isinstance(after.body[0], cst.Return):
        return False
    returned = after.body[0].value
    return returned is None or not facts.value(returned).is_graph


def _backward_after(facts: ModuleFacts, function: FunctionInfo, loop: LoopInfo) -> bool:
    """A backward runs after ``loop`` in ``function``: later in the function, or earlier in an
    enclosing loop's body (its next iteration comes after)."""
    statements = facts.index.statements_of(function)
    inside = [index for index, statement in enumerate(statements) if any(outer is loop for outer in statement.loops)]
    if not inside:
        return False
    enclosing = statements[inside[0]].loops[: [id(l) for l in statements[inside[0]].loops].index(id(loop))]
    for index, statement in enumerate(statements):
        if index in inside:
            continue
        after = index > inside[-1]
        around = any(any(l is outer for l in statement.loops) for outer in enclosing)
        if (after or around) and any(backward_target(c, facts.imports) is not None for c in calls_in(statement.node)):
            return True
    return False


def _later_backward_shares_graph(facts: ModuleFacts, loop: LoopInfo, fact: StatementFact, call: cst.Call) -> bool:
    """Whether a backward after ``call`` in the iteration goes through part of the graph ``call``
    retains. Followed statement by statement: a name re-bound in between holds a new graph
    (``r = D(fake)`` before and after), and ``.detach()`` cuts (``D(fake.detach())``)."""
    statements = facts.index.statements_in_loop(loop.node)
    graphs: dict[str, frozenset[object]] = {}
    retained: frozenset[object] | None = None
    for statement in statements:
        for candidate in calls_in(statement.node):
            target = backward_target(candidate, facts.imports)
            if target is None:
                continue
            if candidate is call:
                retained = _graph_parts(facts, target, graphs, fact, loop)
            elif retained is not None:
                if retained & _graph_parts(facts, target, graphs, statement, loop):
                    return True
        _bind_parts(facts, statement, graphs, loop)
    return retained is None


def _graph_parts(facts: ModuleFacts, expr: cst.CSTNode, graphs: dict[str, frozenset[object]], fact: StatementFact, loop: LoopInfo) -> frozenset[object]:
    """The statements (and names from before the loop) whose graphs ``expr`` is computed from."""
    found: set[object] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted_name(node)
            if name is not None:
                if name in graphs:
                    found |= graphs[name]
                elif _graph_from_before(facts, fact, loop, name):
                    found.add(("before", name))
                if isinstance(node, cst.Attribute):
                    if node.attr.value in torch_api.DETACHED_ATTRIBUTES or node.attr.value in torch_api.NON_TENSOR_ATTRIBUTES:
                        continue
                    stack.append(node.value)
                continue
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method in torch_api.DETACH_METHODS or method in torch_api.TO_PYTHON_METHODS or method in torch_api.NO_GRAD_RESULT_METHODS:
                continue
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            continue
        stack.extend(children(node))
    return frozenset(found)


def _bind_parts(facts: ModuleFacts, statement: StatementFact, graphs: dict[str, frozenset[object]], loop: LoopInfo) -> None:
    node = statement.node
    if isinstance(node, cst.Assign):
        targets = [name for target in node.targets for name in bound_names(target.target)]
        value = node.value
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and node.value is not None:
        targets = bound_names(node.target)
        value = node.value
    else:
        return
    parts = _graph_parts(facts, value, graphs, statement, loop)
    if facts.value(value).kind in (Kind.GRAPH, Kind.UNKNOWN) and facts.value(value).role is None:
        parts = parts | {statement}
    for name in targets:
        graphs[name] = parts | (graphs.get(name, frozenset()) if isinstance(node, cst.AugAssign) else frozenset())


def _drop_retain_graph(facts: ModuleFacts, call: cst.Call) -> SuggestedFix | None:
    """``loss.backward(retain_graph=True)`` → ``loss.backward()``.

    Unsafe: a later backward through the same graph that leaklint did not see would now fail.
    Not offered when a carried state still links the iterations' graphs (the finding above):
    without ``retain_graph`` the next backward would fail until the state is detached, which
    LL103's fix does; once it is, the next ``--fix`` pass offers this one.
    """
    argument = next(arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "retain_graph")
    edit = drop_argument(facts.module, call, argument)
    return SuggestedFix("Drop 'retain_graph=True'", Applicability.UNSAFE, (edit,)) if edit is not None else None


def _graph_from_before(facts: ModuleFacts, fact: StatementFact, loop: LoopInfo, name: str) -> bool:
    """``name`` may hold a graph built before the loop: it is known to, or it is the result of a
    computation there (``feats = model.backbone(x)``) that leaklint cannot see through; a loop
    target or a parameter (the data) does not count."""
    value = fact.env.get(name)
    if value is None or value.role is not None or value.kind in (Kind.DETACHED, Kind.NOT_TENSOR):
        return False
    if value.kind is Kind.GRAPH:
        return True
    scope = fact.function.node if fact.function.node is not None else facts.module
    for node in walk(scope, into=lambda n: n is scope or (not_into_scopes(n) and n is not loop.node)):
        if isinstance(node, cst.Assign) and any(name in bound_names(t.target) for t in node.targets):
            if _is_computation(node.value, facts):
                return True
    return False


def _is_computation(expr: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """A call that may build a graph (not ``x.to(device)``, not a known detached result)."""
    if not isinstance(expr, cst.Call) or facts.value(expr).kind in (Kind.DETACHED, Kind.NOT_TENSOR):
        return False
    func = expr.func
    return not (isinstance(func, cst.Attribute) and func.attr.value in torch_api.VIEW_METHODS)


def _carried_into(facts: ModuleFacts, fact: StatementFact, deps: set[str] | frozenset[str]) -> list[CarriedState]:
    """Carried states (LL103's fact) of an enclosing loop that the differentiated tensor depends on."""
    found: dict[str, CarriedState] = {}
    for carry in carried_states(facts):
        if carry.loop is not None and carry.name in deps and carry.crosses_steps:
            if any(loop is carry.loop for loop in fact.loops):
                found.setdefault(carry.name, carry)
    return list(found.values())


def _built_in_iteration(target: cst.BaseExpression, bound_in_loop: set[str], facts: ModuleFacts) -> bool:
    """The differentiated tensor is computed in the iteration: a name bound in the loop body, or a
    call made right there (``criterion(model(x), y).backward(...)``), not ``y[i]`` of an outer ``y``."""
    return any(root is None or root in bound_in_loop for root in _tensor_roots(target, facts))


def _tensor_roots(expr: cst.BaseExpression, facts: ModuleFacts) -> list[str | None]:
    """The names whose tensor ``expr`` is computed from (None: made by a call inside ``expr``)."""
    name = dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if name is not None:
        return [name]
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _tensor_roots(expr.value, facts)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and facts.value(func.value).role is None:
            return _tensor_roots(func.value, facts)  # out.sum(), y[i].mean(), (a + b).sum()
        return [None]  # criterion(out, y), model(x), self.head(features)
    if isinstance(expr, cst.BinaryOperation):
        return _tensor_roots(expr.left, facts) + _tensor_roots(expr.right, facts)
    if isinstance(expr, cst.UnaryOperation):
        return _tensor_roots(expr.expression, facts)
    return []


def _inputs_in_loop(target: cst.BaseExpression, loop: LoopInfo) -> set[str]:
    """Every name the differentiated tensor is computed from, following the assignments of the
    loop body back (syntactically: it sees through calls the value analysis cannot follow)."""
    sources: dict[str, set[str]] = {}
    for node in walk(loop.node.body, into=not_into_scopes):
        if isinstance(node, cst.Assign):
            read = names_read(node.value)
            for assign_target in node.targets:
                for name in bound_names(assign_target.target):
                    sources.setdefault(name, set()).update(read)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and node.value is not None:
            for name in bound_names(node.target):
                sources.setdefault(name, set()).update(names_read(node.value))
    found = set()
    pending = list(names_read(target))
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.add(name)
        pending.extend(sources.get(name, ()))
    return found


def _bound_in(loop: LoopInfo) -> set[str]:
    """Every dotted name bound anywhere in the loop body (including ``t = t + x`` and loop targets)."""
    names = names_bound_in(loop.node.body)
    if isinstance(loop.node, cst.For):
        names.update(bound_names(loop.node.target))
    return names
