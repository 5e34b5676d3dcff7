"""accelerate's ``Accelerator``: which expressions hold one. It keeps a reference to every object
it prepares until ``free_memory()``, so LL307 asks whether a prepare runs again and again on the
same one, and LL309 whether a ``del`` can free a model it prepared."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from leaklint.analysis import percall_api
from leaklint.analysis.calls import call_graph
from leaklint.analysis.device import is_hf_trainer
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import FunctionInfo
from leaklint.analysis.syntax import call_argument

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts


def is_accelerator(expr: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts, depth: int = 0) -> bool:
    """``expr`` holds an accelerate ``Accelerator``: a name bound to ``Accelerator(...)`` (here, in
    the class, at module level), a parameter every caller in the file... any caller passes one, or
    the ``self.accelerator`` of a transformers / TRL trainer subclass."""
    name = dotted_name(expr)
    if name is None:
        return False
    cls = function.cls
    if name == "self.accelerator" and cls is not None and is_hf_trainer(cls, facts.imports):
        return True
    for value in facts.index.visible_values(function, name):
        if isinstance(value, cst.Call) and facts.imports.resolve(value.func) in percall_api.ACCELERATOR_CLASSES:
            return True
    if "." in name or name not in function.params or depth > 1:
        return False
    for call, fact in call_graph(facts).sites_of(function):
        argument = argument_for_parameter(call, function, name)
        if argument is not None and is_accelerator(argument, fact.function, facts, depth + 1):
            return True
    return False


def argument_for_parameter(call: cst.Call, function: FunctionInfo, param: str) -> cst.BaseExpression | None:
    """What ``call`` passes for ``function``'s parameter ``param``."""
    params = list(function.params)
    if function.is_method and params[:1] in (["self"], ["cls"]):
        params = params[1:]
    return call_argument(call, params.index(param), param) if param in params else None
