"""TfGraph: which local def a call by name runs once the name is rebound, and which loops pick
the variables an op is built on."""

from __future__ import annotations

import textwrap

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.tensorflow import tf_graph


def _graph(source: str):
    facts = ModuleFacts(cst.parse_module(textwrap.dedent(source)))
    return facts, tf_graph(facts)


def _callees(source: str) -> dict[int, str | None]:
    """Line of each call of ``f`` -> the name of the local def it runs (None: none)."""
    facts, tf = _graph(source)
    found = {}
    for place in tf.calls:
        call = place.node
        if isinstance(call.func, cst.Name) and call.func.value == "f":
            callee = tf.callee_of.get(id(call))
            found[facts.line_of(call)] = callee.name if callee is not None else None
    return found


def test_a_call_after_the_rebinding_does_not_run_the_def():
    assert _callees(
        """
        import tensorflow as tf
        def f(x):
            return tf.square(x)
        a = f(1)
        f = wrap(f)
        b = f(2)
        """
    ) == {5: "f", 7: None}


def test_a_nested_function_sees_the_last_binding_of_its_enclosing_scope():
    assert _callees(
        """
        import tensorflow as tf
        def main():
            def f(x):
                return tf.square(x)
            f = wrap(f)
            def g(y):
                return f(y)
            return g
        def other():
            return f(3)
        """
    ) == {8: None, 11: None}


def test_a_def_after_the_rebinding_means_the_def_again():
    assert _callees(
        """
        import tensorflow as tf
        f = None
        def f(x):
            return tf.square(x)
        def g(y):
            return f(y)
        """
    ) == {7: "f"}


def test_a_parameter_or_a_local_hides_a_module_def():
    assert _callees(
        """
        import tensorflow as tf
        def f(x):
            return tf.square(x)
        def g(f, y):
            return f(y)
        def h(y):
            f = pick()
            return f(y)
        def k(y):
            return f(y)
        """
    ) == {6: None, 9: None, 11: "f"}


def test_a_rebound_name_returns_no_graph_tensor():
    facts, tf = _graph(
        """
        import tensorflow as tf
        def f(x):
            return tf.square(x)
        before = f(1)
        f = wrap(f)
        after = f(2)
        """
    )
    kinds = {}
    for node in facts.module.body:
        statement = node.body[0] if isinstance(node, cst.SimpleStatementLine) else None
        if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.Call):
            target = statement.targets[0].target.value
            kinds[target] = tf.graph_kind(statement.value, tf.scopes_of(next(p for p in tf.calls if p.node is statement.value)))
    assert kinds["before"] == "tensor" and kinds["after"] is None


def _picks(source: str) -> dict[int, bool]:
    """Line of each loop -> whether it picks the receiver of the ``.assign`` call in it."""
    facts, tf = _graph(source)
    found = {}
    for place in tf.calls:
        call = place.node
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "assign":
            for loop in place.loop_nodes:
                found[facts.line_of(loop)] = tf.picked_by(call.func.value, loop, place)
    return found


def test_a_loop_picks_variables_by_its_item_or_its_variable_scope():
    assert _picks(
        """
        import tensorflow as tf
        for block, params in weights.items():
            with tf.variable_scope(block, reuse=True):
                for name, value in params.items():
                    var = tf.get_variable(name)
                    sess.run(var.assign(value))
        """
    ) == {3: True, 5: True}


def test_a_loop_whose_item_picks_nothing_is_not_a_pass_over_variables():
    assert _picks(
        """
        import tensorflow as tf
        for update in stream():
            for name, value in update.items():
                sess.run(tf.get_variable(name).assign(value))
        counter = tf.get_variable("counter")
        for step in range(100):
            sess.run(counter.assign(step))
        """
    ) == {3: False, 4: True, 7: False}
