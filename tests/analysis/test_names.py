"""leaklint.analysis.names: which names an expression reads, and what an unimported name means."""

from __future__ import annotations

import libcst as cst

from leaklint.analysis.names import ImportMap, names_read


def reads(expression: str) -> set[str]:
    return names_read(cst.parse_expression(expression))


def test_a_comprehension_reads_its_iterable_not_its_own_variable():
    assert "loss" not in reads("sum(loss for loss in loss_dict.values())")
    assert {"loss_dict", "loss_dict.values", "sum"} <= reads("sum(loss for loss in loss_dict.values())")


def test_a_comprehension_still_reads_the_outer_names_its_element_uses():
    assert {"scale", "xs"} <= reads("[x * scale for x in xs if x > 0]")
    assert "x" not in reads("[x * scale for x in xs if x > 0]")


def test_the_first_iterable_is_read_outside_even_when_the_variable_shares_its_name():
    assert "x" in reads("[x for x in x]")


def test_nested_fors_bind_for_the_later_iterables_and_dict_parts():
    found = reads("{k: v for row in rows for k, v in row.items()}")
    assert "rows" in found and not {"row", "k", "v"} & found


def test_an_unbound_torch_in_a_file_that_imports_from_torch_is_torch():
    module = cst.parse_module("from torch import nn\nwith torch.no_grad():\n    pass\n")
    imports = ImportMap.from_module(module)
    call = module.body[1].items[0].item
    assert imports.resolve(call.func) == "torch.no_grad"


def test_an_unbound_torch_means_nothing_where_torch_is_not_imported_at_all():
    module = cst.parse_module("import numpy as np\nwith torch.no_grad():\n    pass\n")
    imports = ImportMap.from_module(module)
    call = module.body[1].items[0].item
    assert imports.resolve(call.func) is None


def test_a_value_built_by_a_comprehension_does_not_depend_on_the_outer_name_its_variable_shadows():
    """`loss = sum(loss for loss in d.values())`: the new loss comes from d, not from the old loss
    (LL103 would otherwise read a state fed back into the next iteration)."""
    import textwrap

    from leaklint.analysis.facts import ModuleFacts

    module = cst.parse_module(textwrap.dedent(
        """
        def step(model, x):
            loss_dict = model(x)
            loss = sum(loss for loss in loss_dict.values())
            return loss
        """
    ))
    facts = ModuleFacts(module)
    assign = module.body[0].body.body[1].body[0]
    deps = facts.value(assign.value).deps
    assert "loss_dict" in deps and "loss" not in deps
