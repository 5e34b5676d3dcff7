"""The fixes of LL103, LL104, LL401, LL403 and LL404 on real snippets: the exact fixed text, the
applicability each one carries, and the places where no fix may be offered. Every applied fix
must compile and leave no finding of its rule behind; the rule docs say why under *Fix safety*."""

from __future__ import annotations

import re
import textwrap

import pytest

from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Applicability, Finding
from leaklint.fixes.apply import apply_fixes
from leaklint.fixes.fixer import fix_text
from leaklint.registry import all_rules
from leaklint.rule import DOC_SECTIONS

RULES = all_rules()
SETTINGS = Settings()


def findings(source: str, *codes: str) -> list[Finding]:
    outcome = lint_text(textwrap.dedent(source), "t.py", [RULES[code] for code in codes], SETTINGS)
    assert outcome.errors == []
    return outcome.findings


def fixed(source: str, *codes: str) -> str:
    """``source`` after ``--fix --unsafe-fixes`` with ``codes``: it compiles, and re-linting it
    finds none of those rules' findings."""
    rules = [RULES[code] for code in codes]
    outcome = fix_text(textwrap.dedent(source), "t.py", rules, SETTINGS, unsafe=True)
    assert outcome.errors == [], [e.describe() for e in outcome.errors]
    compile(outcome.fixed, "t.py", "exec")
    remaining = lint_text(outcome.fixed, "t.py", rules, SETTINGS).findings
    assert [f.code for f in remaining if f.code in codes] == []
    return outcome.fixed


def fix_applicability(source: str, code: str) -> Applicability | None:
    [finding] = [f for f in findings(source, code) if f.code == code]
    return finding.fix.applicability if finding.fix is not None else None


def unfixed(source: str, code: str) -> None:
    """The rule reports ``source`` and offers no fix."""
    reported = [f for f in findings(source, code) if f.code == code]
    assert reported and all(f.fix is None for f in reported)


def dedent(source: str) -> str:
    return textwrap.dedent(source)


# ---- LL101 / LL102: .detach() only where it cannot fail ----------------------------------------------
DETR_LOOP = """\
    import torch
    def train(model, criterion, loader, opt, weight_dict):
        logs = []
        for x, y in loader:
            loss_dict = criterion(model(x), y)
            losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
            opt.zero_grad()
            losses.backward()
            opt.step()
            logs.append(loss_dict)
        return logs
    """


def test_ll102_a_loss_dict_is_reported_with_a_display_only_fix_never_a_detach_call():
    [finding] = findings(DETR_LOOP, "LL102")
    assert finding.fix is not None and finding.fix.applicability is Applicability.DISPLAY_ONLY
    assert [edit.replacement for edit in finding.fix.edits] == ["{k: v.detach() for k, v in loss_dict.items()}"]
    assert "loss_dict.detach()" not in (finding.help or "")
    for unsafe in (False, True):
        outcome = fix_text(dedent(DETR_LOOP), "t.py", [RULES["LL102"]], SETTINGS, unsafe=unsafe)
        assert outcome.fixed == dedent(DETR_LOOP) and outcome.errors == []


def test_ll102_a_dict_a_helper_returns_gets_no_detach_call():
    """fairseq's criterion returns ``logging_output = {"loss": loss, ...}``; the trainer keeps it:
    a dict has no .detach(), so no fix is offered and the help says what to detach."""
    source = """\
        import torch
        import torch.nn.functional as F
        class Criterion:
            def __call__(self, model, x, y):
                loss = F.cross_entropy(model(x), y)
                logging_output = {"loss": loss, "n": x.size(0)}
                return loss, logging_output
        class Trainer:
            def __init__(self, model, criterion):
                self.model, self.criterion = model, criterion
                self.logs = []
            def step(self, x, y):
                loss, logging_output = self.criterion(self.model, x, y)
                loss.backward()
                self.logs.append(logging_output)
        trainer = Trainer(torch.nn.Linear(4, 3), Criterion())
        for x, y in loader:
            trainer.step(x, y)
        """
    [finding] = findings(source, "LL102")
    assert finding.fix is None
    assert "logging_output.detach()" not in (finding.help or "")


@pytest.mark.parametrize(
    "usage",
    ["print(loss[0])", "print(len(loss))", "print([t for t in loss])", "a, b = loss", "print(loss[i])"],
)
def test_ll102_a_loss_the_file_indexes_or_iterates_gets_only_an_unsafe_fix(usage):
    source = f"""\
        def train(model, loader, crit, i):
            hist = []
            for x, y in loader:
                loss = crit(model(x), y)
                loss.backward()
                hist.append(loss)
                {usage}
        """
    assert fix_applicability(source, "LL102") is Applicability.UNSAFE


def test_ll101_a_loss_dict_accumulated_gets_no_fix():
    source = """\
        def train(model, loader, criterion):
            total = 0
            for x, y in loader:
                loss_dict = criterion(model(x), y)
                sum(loss_dict.values()).backward()
                total += loss_dict
        """
    assert fix_applicability(source, "LL101") is None


def test_ll101_a_call_to_a_loss_known_only_by_name_is_detached_unsafely():
    source = """\
        def evaluate(model, loader, criterion):
            total = 0
            for x, y in loader:
                total += criterion(model(x), y)
        """
    assert fix_applicability(source, "LL101") is Applicability.UNSAFE


def test_conditional_expressions_are_detached_branch_by_branch():
    source = """\
        def train(model, loader, crit):
            hist = []
            acc = 0
            for x, y in loader:
                loss = crit(model(x), y)
                loss.backward()
                hist.append(loss if x else None)
                acc += loss if x else 0
                hist.append(loss if x else loss * 2)
        """
    assert [f.fix.applicability for f in findings(source, "LL101", "LL102")] == [Applicability.SAFE] * 3
    outcome = fix_text(dedent(source), "t.py", [RULES["LL101"], RULES["LL102"]], SETTINGS, unsafe=False)
    assert outcome.errors == []
    assert outcome.fixed == dedent(source).replace(
        "hist.append(loss if x else None)", "hist.append(loss.detach() if x else None)"
    ).replace("acc += loss if x else 0", "acc += loss.detach() if x else 0").replace(
        "hist.append(loss if x else loss * 2)", "hist.append(loss.detach() if x else loss.detach() * 2)"
    )


def test_ll102_every_graph_element_of_a_literal_is_detached_and_one_fix_does_not_block_another():
    source = """\
        def train(model, loader, crit):
            hist = []
            for x, y in loader:
                loss = crit(model(x), y)
                loss.backward()
                hist.append(loss)
                hist.extend([loss, loss])
                hist.extend([loss, loss * 2, x])
        """
    outcome = fix_text(dedent(source), "t.py", [RULES["LL102"]], SETTINGS, unsafe=False)
    assert outcome.errors == [] and outcome.remaining == []
    assert outcome.fixed == dedent(source).replace("append(loss)", "append(loss.detach())").replace(
        "[loss, loss]", "[loss.detach(), loss.detach()]"
    ).replace("[loss, loss * 2, x]", "[loss.detach(), loss.detach() * 2, x]")


# ---- LL103 hidden-state-carry ----------------------------------------------------------------------
def test_ll103_detaches_an_unknown_state_at_the_top_of_the_loop():
    source = """\
        import torch
        def train(model, batches, criterion, optimizer):
            hidden = model.init_hidden(20)
            for data, targets in batches:
                optimizer.zero_grad()
                output, hidden = model(data, hidden)
                criterion(output, targets).backward()
                optimizer.step()
        """
    assert fixed(source, "LL103") == dedent(
        """\
        import torch
        def train(model, batches, criterion, optimizer):
            hidden = model.init_hidden(20)
            for data, targets in batches:
                hidden = hidden.detach() if isinstance(hidden, torch.Tensor) else tuple(t.detach() for t in hidden)
                optimizer.zero_grad()
                output, hidden = model(data, hidden)
                criterion(output, targets).backward()
                optimizer.step()
        """
    )
    assert fix_applicability(source, "LL103") is Applicability.UNSAFE


def test_ll103_detaches_an_lstm_pair_together_in_the_loop_that_carries_it():
    source = """\
        import torch
        import torch.nn as nn
        lstm = nn.LSTM(32, 64)
        h = torch.zeros(1, 16, 64)
        c = torch.zeros(1, 16, 64)
        for epoch in range(10):
            for data, targets in loader:
                if h.size(1) != data.size(1):
                    h = torch.zeros(1, data.size(1), 64)
                    c = torch.zeros(1, data.size(1), 64)
                out, (h, c) = lstm(data, (h, c))
                (out - targets).pow(2).mean().backward()
        """
    assert "        h, c = h.detach(), c.detach()\n        if h.size(1)" in fixed(source, "LL103")


def test_ll103_detaches_a_tensor_state_before_the_inner_time_loop():
    source = """\
        import torch
        import torch.nn as nn
        cell = nn.GRUCell(16, 32)
        h = torch.zeros(8, 32)
        for x, y in loader:
            for t in range(x.size(0)):
                h = cell(x[t], h)
            ((h - y) ** 2).mean().backward()
        """
    assert fixed(source, "LL103") == dedent(
        """\
        import torch
        import torch.nn as nn
        cell = nn.GRUCell(16, 32)
        h = torch.zeros(8, 32)
        for x, y in loader:
            h = h.detach()
            for t in range(x.size(0)):
                h = cell(x[t], h)
            ((h - y) ** 2).mean().backward()
        """
    )


def test_ll103_detaches_a_tuple_state_element_by_element():
    source = """\
        import torch
        def train(model, batches):
            state = (torch.zeros(4), torch.zeros(4))
            for data, targets in batches:
                out, state = model(data, state)
                out.sum().backward()
        """
    assert "        state = tuple(t.detach() for t in state)\n        out, state" in fixed(source, "LL103")


def test_ll103_guards_a_state_that_starts_as_none():
    source = """\
        def train(model, batches, criterion):
            state = None
            for data, targets in batches:
                output, new_state = model(data, state)
                state = new_state
                criterion(output, targets).backward()
        """
    assert fixed(source, "LL103") == dedent(
        """\
        import torch
        def train(model, batches, criterion):
            state = None
            for data, targets in batches:
                if state is not None:
                    state = state.detach() if isinstance(state, torch.Tensor) else tuple(t.detach() for t in state)
                output, new_state = model(data, state)
                state = new_state
                criterion(output, targets).backward()
        """
    )


def test_ll103_detaches_a_module_state_at_the_start_of_forward():
    source = """\
        import torch.nn as nn
        class Forecaster(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.GRU(4, 16, batch_first=True)
                self.hidden = None
            def forward(self, x):
                \"\"\"One step.\"\"\"
                out, self.hidden = self.rnn(x, self.hidden)
                return out[:, -1]
        """
    assert fixed(source, "LL103") == dedent(
        """\
        import torch.nn as nn
        class Forecaster(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.GRU(4, 16, batch_first=True)
                self.hidden = None
            def forward(self, x):
                \"\"\"One step.\"\"\"
                if self.hidden is not None:
                    self.hidden = self.hidden.detach()
                out, self.hidden = self.rnn(x, self.hidden)
                return out[:, -1]
        """
    )


def test_ll103_finds_a_state_set_in_init_for_a_loop_in_another_method():
    source = """\
        class Trainer:
            def __init__(self, model):
                self.model = model
                self.hidden = model.init_hidden(4)
            def train(self, loader):
                for x, y in loader:
                    out, self.hidden = self.model(x, self.hidden)
                    out.sum().backward()
        """
    assert "            self.hidden = self.hidden.detach() if isinstance(self.hidden, torch.Tensor)" in fixed(source, "LL103")


def test_ll103_uses_the_files_torch_alias():
    source = """\
        import torch as th
        def train(model, batches):
            hidden = model.init_hidden(2)
            for data in batches:
                out, hidden = model(data, hidden)
                out.sum().backward()
        """
    assert "isinstance(hidden, th.Tensor)" in fixed(source, "LL103")


@pytest.mark.parametrize(
    "source",
    [
        # not bound before the loop: the first iteration would raise NameError
        """\
        def train(model, batches, criterion):
            for data, targets in batches:
                output, state = model(data, state)
                criterion(output, targets).backward()
        """,
        # a float has no .detach()
        """\
        import torch.nn as nn
        class Normalizer(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)
                self.mu = 0.0
            def forward(self, x):
                h = self.proj(x)
                self.mu = 0.9 * self.mu + 0.1 * h.mean(0)
                return h - self.mu
        """,
        # bound only in a branch before the loop
        """\
        def train(model, batches, criterion, warm):
            if warm:
                hidden = model.init_hidden(20)
            for data, targets in batches:
                output, hidden = model(data, hidden)
                criterion(output, targets).backward()
        """,
        # a tuple of Nones: its elements have no .detach()
        """\
        def train(model, batches, criterion):
            hidden = (None, None)
            for data, targets in batches:
                output, hidden = model(data, hidden)
                criterion(output, targets).backward()
        """,
    ],
    ids=["unbound", "number", "conditional", "tuple-of-none"],
)
def test_ll103_offers_no_fix_where_the_start_of_the_state_is_unknown(source):
    unfixed(source, "LL103")


def test_ll103_takes_a_none_default_parameter_into_account():
    source = """\
        def train(model, batches, hidden=None):
            for data in batches:
                out, hidden = model(data, hidden)
                out.sum().backward()
        """
    assert "        if hidden is not None:\n" in fixed(source, "LL103")


# ---- LL104 retain-graph-in-loop ------------------------------------------------------------------
def test_ll104_drops_retain_graph():
    source = """\
        import torch
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward(retain_graph=True)
            optimizer.step()
        for x, y in loader:
            out = model(x)
            torch.autograd.backward(criterion(out, y), retain_graph=True, inputs=params)
        for x, y in loader:
            out = model(x)
            grads = torch.autograd.grad(criterion(out, y), params, retain_graph=True)
        """
    result = fixed(source, "LL104")
    assert "    loss.backward()\n" in result
    assert "    torch.autograd.backward(criterion(out, y), inputs=params)\n" in result
    assert "    grads = torch.autograd.grad(criterion(out, y), params)\n" in result
    assert all(f.fix.applicability is Applicability.UNSAFE for f in findings(source, "LL104"))


def test_ll104_waits_for_the_carried_state_to_be_detached():
    source = """\
        import torch
        def train(model, batches, criterion, optimizer):
            hidden = model.init_hidden(20)
            for data, targets in batches:
                output, hidden = model(data, hidden)
                loss = criterion(output, targets)
                loss.backward(retain_graph=True)
                optimizer.step()
        """
    unfixed(source, "LL104")  # alone, the second iteration would fail
    result = fixed(source, "LL103", "LL104")  # LL103 detaches first, the next pass drops it
    assert "hidden = hidden.detach() if" in result and "loss.backward()\n" in result


def test_ll104_keeps_the_layout_of_a_call_over_several_lines():
    source = """\
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward(
                gradient,
                retain_graph=True,
            )
        """
    assert fixed(source, "LL104") == dedent(source).replace("        gradient,\n        retain_graph=True,\n", "        gradient,\n")


def test_ll104_keeps_a_comment_next_to_the_argument_by_offering_no_fix():
    unfixed(
        """\
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward(
                retain_graph=True,  # needed? see issue 12
            )
        """,
        "LL104",
    )


@pytest.mark.parametrize(
    "call",
    [
        "torch.autograd.backward(\n        loss,\n        retain_graph=True,  # keep\n    )",
        "torch.autograd.backward(\n        loss,  # the loss\n        retain_graph=True,\n    )",
        "torch.autograd.backward(loss, retain_graph=True,  # keep\n    )",
        "loss.backward(  # why\n        retain_graph=True)",
    ],
)
def test_ll104_a_comment_anywhere_next_to_the_argument_means_no_fix(call):
    unfixed(f"import torch\nfor x, y in loader:\n    loss = criterion(model(x), y)\n    {call}\n", "LL104")


@pytest.mark.parametrize("argument", ["retain_graph=True", "retain_graph=True,"])
def test_ll104_dropping_the_only_argument_of_a_call_over_several_lines_closes_it(argument):
    source = f"for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward(\n        {argument}\n    )\n    step()\n"
    assert fixed(source, "LL104") == "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    step()\n"


# ---- LL401 non-inplace-op ------------------------------------------------------------------------
def test_ll401_rewrites_updates_in_place():
    source = """\
        import torch
        import torch.nn.functional as F
        from torch import nn
        with torch.no_grad():
            probs = F.softmax(model(batch), dim=-1)
            probs = probs * 100
            probs = 2 * probs
            probs = probs - (1 if flag else 2)
            probs = torch.clamp(probs, 0, 99)
            probs = probs.clamp(min=0)
            probs = torch.relu(probs)
            probs = (probs.sigmoid())
            probs = F.leaky_relu(probs, 0.2)
            act = nn.ReLU()
            slope = nn.ELU(1.0,)
        """
    assert fixed(source, "LL401") == dedent(
        """\
        import torch
        import torch.nn.functional as F
        from torch import nn
        with torch.no_grad():
            probs = F.softmax(model(batch), dim=-1)
            probs *= 100
            probs *= 2
            probs -= (1 if flag else 2)
            probs.clamp_(0, 99)
            probs.clamp_(min=0)
            probs.relu_()
            probs.sigmoid_()
            probs = F.leaky_relu(probs, 0.2, inplace=True)
            act = nn.ReLU(inplace=True)
            slope = nn.ELU(1.0, inplace=True)
        """
    )
    assert {f.fix.applicability for f in findings(source, "LL401")} == {Applicability.UNSAFE}


@pytest.mark.parametrize(
    "statement",
    ["probs = probs * 2; other = 1", "probs = F.dropout(probs, *options)", "probs = probs * (\n        2)"],
    ids=["shares-its-line", "star-args", "several-lines"],
)
def test_ll401_offers_no_fix_where_the_rewrite_is_not_plain(statement):
    source = f"""\
import torch
import torch.nn.functional as F
with torch.no_grad():
    probs = F.softmax(model(batch), dim=-1)
    {statement}
"""
    unfixed(source, "LL401")


def test_ll401_does_not_report_inplace_passed_by_position():
    source = """\
        import torch
        import torch.nn.functional as F
        from torch import nn
        with torch.no_grad():
            act = nn.LeakyReLU(0.1, True)
            probs = model(batch)
            probs = F.dropout(probs, 0.5, False, False)
        """
    assert findings(source, "LL401") == []


# ---- LL403 zero-grad-keeps-grads -------------------------------------------------------------------
def test_ll403_drops_set_to_none_false():
    source = """\
        for x, y in loader:
            optimizer.zero_grad(set_to_none=False)
            model.zero_grad(False)
            model(x).sum().backward()
            optimizer.step()
        """
    assert fixed(source, "LL403") == dedent(
        """\
        for x, y in loader:
            optimizer.zero_grad()
            model.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        """
    )
    assert {f.fix.applicability for f in findings(source, "LL403")} == {Applicability.UNSAFE}


@pytest.mark.parametrize(
    "use",
    ["p.grad += 1e-3 * torch.randn_like(p)", "norms.append(p.grad.norm())", "p.grad.data.mul_(0.5)"],
)
def test_ll403_only_shows_the_fix_where_a_gradient_is_used_as_a_tensor(use):
    """With set_to_none=True the gradient is None before the next backward: the line would raise."""
    source = f"""\
        for x, y in loader:
            optimizer.zero_grad(set_to_none=False)
            for p in model.parameters():
                {use}
            model(x).sum().backward()
            optimizer.step()
        """
    assert {f.fix.applicability for f in findings(source, "LL403")} == {Applicability.DISPLAY_ONLY}


def test_ll403_none_tests_and_assignments_of_gradients_keep_the_fix_applicable():
    source = """\
        for x, y in loader:
            optimizer.zero_grad(set_to_none=False)
            model(x).sum().backward()
            for p in model.parameters():
                if p.grad is not None:
                    p.grad = None
            optimizer.step()
        """
    assert {f.fix.applicability for f in findings(source, "LL403")} == {Applicability.UNSAFE}


def test_ll403_offers_no_fix_for_zeroing_by_hand():
    unfixed(
        """\
        def reset_grads(net):
            for name, param in net.named_parameters():
                param.grad.zero_()
        """,
        "LL403",
    )


# ---- LL404 anomaly-detection-enabled: display only -------------------------------------------------
ANOMALY = dedent(
    """\
    import torch
    from torch import autograd
    import pytorch_lightning as pl
    torch.autograd.set_detect_anomaly(True)
    def train(model, loader, optimizer):
        for x, y in loader:
            with autograd.detect_anomaly():
                loss = model(x).sum()
                loss.backward()
            optimizer.step()
    def setup():
        torch.autograd.set_detect_anomaly(True)
    @torch.autograd.detect_anomaly()
    def train_step(model, batch):
        model(batch).sum().backward()
    trainer = pl.Trainer(max_epochs=10, detect_anomaly=True)
    """
)


def test_ll404_fixes_are_shown_but_never_applied():
    reported = findings(ANOMALY, "LL404")
    with_fix = [f for f in reported if f.fix is not None]
    assert len(reported) == 5 and len(with_fix) == 4  # the decorator has none
    assert {f.fix.applicability for f in with_fix} == {Applicability.DISPLAY_ONLY}
    assert fix_text(ANOMALY, "t.py", [RULES["LL404"]], SETTINGS, unsafe=True).fixed == ANOMALY


def test_ll404_suggested_edits_remove_the_switch():
    shown = apply_fixes(ANOMALY, findings(ANOMALY, "LL404"), lambda finding: True).text
    compile(shown, "t.py", "exec")
    assert shown == dedent(
        """\
        import torch
        from torch import autograd
        import pytorch_lightning as pl
        def train(model, loader, optimizer):
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
        def setup():
            pass
        @torch.autograd.detect_anomaly()
        def train_step(model, batch):
            model(batch).sum().backward()
        trainer = pl.Trainer(max_epochs=10)
        """
    )


def test_ll404_offers_nothing_for_a_with_that_binds_a_name():
    unfixed("import torch\nfor x in loader:\n    with torch.autograd.detect_anomaly() as a:\n        model(x).sum().backward()\n", "LL404")


# ---- docs -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("code, rule", list(RULES.items()))
def test_every_rule_documents_its_fix_safety_in_section_order(code, rule):
    headings = re.findall(r"^## (.+)$", rule.docs, re.M)
    assert [h for h in headings if h in DOC_SECTIONS] == list(DOC_SECTIONS)
    section = rule.docs.split("## Fix safety", 1)[1].split("\n## ", 1)[0]
    if rule.fixable:
        assert re.search(r"\*\*(Safe|Unsafe|Display only)\*\*", section, re.I), code
    else:
        assert section.strip().startswith("No automatic fix"), code
