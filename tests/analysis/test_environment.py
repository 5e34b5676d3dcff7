"""The provenance pass's environment (leaklint/analysis/environment.py): views see the bindings of
their time, forks read their parent and write only their own, and nothing is copied per statement."""

from __future__ import annotations

import textwrap

import libcst as cst

from leaklint.analysis.environment import Env, EnvView
from leaklint.analysis.facts import ModuleFacts


def test_a_view_keeps_the_bindings_of_its_time():
    env = Env({"a": "first"})
    before = env.view()
    env["a"] = "second"
    env["b"] = "new"
    del env["a"]
    assert before["a"] == "first" and "b" not in before
    assert "a" not in env and env["b"] == "new"
    assert dict(env) == {"b": "new"}


def test_a_fork_reads_its_parent_and_writes_only_its_own_bindings():
    parent = Env({"a": 1, "b": 2})
    branch = parent.fork()
    assert branch["a"] == 1 and branch.written == set()
    branch["a"] = 10
    branch.pop("b")
    assert (parent["a"], parent["b"]) == (1, 2)
    assert branch["a"] == 10 and "b" not in branch
    assert branch.written == {"a", "b"}
    assert sorted(branch) == ["a"] and len(branch) == 1


def test_a_view_of_a_fork_sees_the_parent_as_it_was():
    parent = Env({"x": "before"})
    branch = parent.fork()
    seen = branch.view()
    parent["x"] = "merged later"  # the interpreter writes a branch's results back after it ran
    assert seen["x"] == "before" and branch.view()["x"] == "merged later"


def test_statements_see_a_view_of_the_environment_not_a_copy():
    source = textwrap.dedent(
        """\
        import torch
        total = 0
        for batch in loader:
            loss = model(batch).sum()
            total = total + loss
        """
    )
    facts = ModuleFacts(cst.parse_module(source))
    envs = [fact.env for fact in facts.statements()]
    assert envs and all(isinstance(env, EnvView) for env in envs)
    first_assignment = next(f for f in facts.statements() if "total = 0" in facts.describe(f.node))
    assert "total" not in first_assignment.env  # the view before the statement ran
