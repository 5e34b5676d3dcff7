"""Objects that hold a whole model: what a call builds (a model, a trainer, a pipeline, an object
of the file's own classes that keeps one), and which classes of the file keep a model in an
attribute, directly or through an object their constructor is given.

LL301 asks which instances are heavy to keep alive; LL305 asks which objects a function builds
anew on every call. Both read the same answers, computed once per file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from leaklint.analysis import percall_api, torch_api
from leaklint.analysis.calls import function_named
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.values import Role
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts

#: How deep :func:`built_here` follows names, local factories and trial attributes.
MAX_DEPTH = 3
#: Rounds of "a class holds a model because its constructor is given an object that does".
_HOLDER_ROUNDS = 4


@dataclass(frozen=True)
class Built:
    """A heavy object built by one call: what it is (for messages) and the call that builds it."""

    what: str
    node: cst.Call
    #: An inference pipeline loaded again (a diffusers pipeline, ``transformers.pipeline``).
    pipeline: bool = False
    #: Loaded from disk or the hub (``from_pretrained``, ``pipeline()``, ``torch.hub.load``).
    loaded: bool = False


def built_here(
    expr: cst.BaseExpression,
    function: FunctionInfo,
    facts: ModuleFacts,
    depth: int = 0,
    holders: dict[ClassInfo, str] | None = None,
) -> Built | None:
    """The model, trainer or pipeline that ``expr`` (evaluated in ``function``) refers to, when
    ``function`` builds it anew on every call: a constructor or factory call (``nn.Sequential(...)``,
    ``AutoModel.from_pretrained(...)``, ``Trainer(model=...)``, ``MyModule()``, an object of a
    class of the file that keeps a model), a local function that returns one, a local name
    bound to one, or what ``trial.set_user_attr(key, model)`` put in ``trial.user_attrs[key]``.
    None for objects that come from elsewhere (a parameter, ``self.model``, a global).
    ``holders``: the classes known to keep a model (default: :func:`model_holders`)."""
    if depth > MAX_DEPTH:
        return None
    expr = strip_returns_self(expr)
    if isinstance(expr, cst.Call):
        return _built_by_call(expr, function, facts, depth, holders)
    if isinstance(expr, cst.Name) and function.node is not None:
        if expr.value in function.params:
            return None
        for value in facts.index.assigned_values(function, expr.value):
            found = built_here(value, function, facts, depth + 1, holders)
            if found is not None:
                return found
        return None
    if isinstance(expr, cst.Subscript):
        return _trial_attribute(expr, facts, depth, holders)
    return None


def strip_returns_self(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``nn.Sequential(...).to(device).eval()`` -> ``nn.Sequential(...)``."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in torch_api.MODULE_RETURNS_SELF
        and isinstance(expr.func.value, cst.Call)
    ):
        expr = expr.func.value
    return expr


def _built_by_call(
    call: cst.Call, function: FunctionInfo, facts: ModuleFacts, depth: int, holders: dict[ClassInfo, str] | None
) -> Built | None:
    qualified = facts.imports.resolve(call.func)
    if qualified is not None:
        short = qualified.rsplit(".", 2)
        label = ".".join(short[-2:]) if short[-1] in ("from_pretrained", "from_single_file", "from_config") else short[-1]
        loaded = qualified.endswith(percall_api.LOADERS) or qualified in percall_api.LOADING_FUNCTIONS
        if percall_api.loads_pipeline(qualified) or qualified == "transformers.pipeline":
            return Built(f"a pipeline ({label})", call, pipeline=True, loaded=loaded)
        if percall_api.builds_model_holder(qualified):
            what = f"a model ({label})" if loaded else f"a '{label}' (it keeps the model)"
            return Built(what, call, loaded=loaded)
        if torch_api.is_module_class(qualified) or torch_api.is_model_factory(qualified):
            return Built(f"a model ({label})", call, loaded=loaded)
        return None
    if not isinstance(call.func, cst.Name):
        return None
    name = call.func.value
    local = function_named(name, function, facts)
    if local is not None:
        callee = facts.structure.functions[local]
        for returned in _returned_values(local):
            found = built_here(returned, callee, facts, depth + 1, holders)
            if found is not None:
                return Built(found.what, call, found.pipeline, found.loaded)
        return None
    cls = facts.structure.classes_by_name.get(name)
    if cls is None:
        return None
    if cls.is_module:
        return Built(f"a model ('{cls.name}')", call)
    reason = (model_holders(facts) if holders is None else holders).get(cls)
    return Built(f"a '{cls.name}' (it {reason})", call) if reason else None


def _returned_values(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    return [
        node.value
        for node in walk(function.body, into=not_into_scopes)
        if isinstance(node, cst.Return) and node.value is not None
    ]


def _trial_attribute(
    expr: cst.Subscript, facts: ModuleFacts, depth: int, holders: dict[ClassInfo, str] | None
) -> Built | None:
    """``trial.user_attrs["model"]``: what ``trial.set_user_attr("model", model)`` stored."""
    base = expr.value
    if not isinstance(base, cst.Attribute) or len(expr.slice) != 1:
        return None
    setter = percall_api.TRIAL_ATTRIBUTE_SETTERS.get(base.attr.value)
    index = expr.slice[0].slice
    key = index.value if isinstance(index, cst.Index) else None
    if setter is None or not isinstance(key, cst.SimpleString):
        return None
    for place in facts.index.calls_named(setter):
        call = place.node
        assert isinstance(call, cst.Call)
        if len(call.args) < 2 or not isinstance(call.args[0].value, cst.SimpleString):
            continue
        if call.args[0].value.evaluated_value != key.evaluated_value:
            continue
        owner = place.function(facts)
        if owner is not None:
            found = built_here(call.args[1].value, owner, facts, depth + 1, holders)
            if found is not None:
                what = f"{found.what}, built in '{owner.name}' and put in {base.attr.value}"
                return Built(what, found.node, found.pipeline, found.loaded)
    return None


# --- classes that keep a model ----------------------------------------------------------------------
def model_holders(facts: ModuleFacts) -> dict[ClassInfo, str]:
    """Classes of the file (not ``nn.Module`` subclasses, which are models themselves) whose
    instances keep a model, with the reason ("holds a model in 'self.model'"): an attribute
    assigned a model, a trainer or a pipeline, or assigned a constructor argument that every
    construction in the file passes such an object (``BatchWorld(InnerWorld(agent))``, where the
    agent holds the model). Built once per file."""
    return facts.derived(_model_holders)


def model_attributes(facts: ModuleFacts) -> dict[ClassInfo, set[str]]:
    """The attributes (``self.text_encoder``) of the file's classes that hold a model because every
    construction of the class passes one for the ``__init__`` parameter they keep
    (``ValidationPrompts(prompts, tokenizer, text_encoder)`` with a ``from_pretrained`` model)."""
    return facts.derived(_model_attributes)


def _model_attributes(facts: ModuleFacts) -> dict[ClassInfo, set[str]]:
    found: dict[ClassInfo, set[str]] = {}
    from_params = attributes_from_params(facts)
    constructions = _constructions(facts, set(from_params))
    for cls, params in from_params.items():
        calls = constructions.get(cls, [])
        for param, attribute in params.items():
            values = [facts.value(arg) for call in calls if (arg := argument_for(call, cls, param, facts)) is not None]
            if values and all(value.role is Role.MODEL and value.confidence >= Confidence.MEDIUM for value in values):
                found.setdefault(cls, set()).add(attribute)
    return found


def attributes_from_params(facts: ModuleFacts) -> dict[ClassInfo, dict[str, str]]:
    """``self.x = x`` in ``__init__``: class -> {parameter: attribute}. Built once per file."""
    return facts.derived(_attributes_from_params)


def _attributes_from_params(facts: ModuleFacts) -> dict[ClassInfo, dict[str, str]]:
    found: dict[ClassInfo, dict[str, str]] = {}
    for statement in facts.statements():
        function, node = statement.function, statement.node
        if function.cls is None or function.name != "__init__" or not isinstance(node, cst.Assign):
            continue
        value = node.value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in torch_api.MODULE_RETURNS_SELF:
            value = value.func.value  # self.model = model.to(device).eval()
        if not isinstance(value, cst.Name) or value.value not in function.params[1:]:
            continue
        for target in node.targets:
            name = dotted_name(target.target)
            if name and name.startswith("self.") and name.count(".") == 1:
                found.setdefault(function.cls, {})[value.value] = name
    return found


def argument_for(call: cst.Call, cls: ClassInfo, param: str, facts: ModuleFacts) -> cst.BaseExpression | None:
    """What ``call`` (a construction of ``cls``) passes for ``__init__``'s parameter ``param``."""
    init = cls.find_method("__init__")
    info = facts.structure.functions.get(init) if init is not None else None
    if info is None or param not in info.params[1:]:
        return None
    return call_argument(call, info.params[1:].index(param), param)


def _model_holders(facts: ModuleFacts) -> dict[ClassInfo, str]:
    holders: dict[ClassInfo, str] = {}
    from_params: dict[ClassInfo, dict[str, str]] = {}
    for statement in facts.statements():
        cls = statement.function.cls
        node = statement.node
        if cls is None or cls.is_module or cls in holders or not isinstance(node, cst.Assign):
            continue
        attributes = [name for target in node.targets if (name := dotted_name(target.target)) and name.startswith("self.")]
        if not attributes:
            continue
        value = facts.value(node.value)
        if value.role is Role.MODEL and value.confidence >= Confidence.MEDIUM:
            holders[cls] = f"holds a model in '{attributes[0]}'"
            continue
        if statement.function.name == "__init__" and isinstance(node.value, cst.Name) and node.value.value in statement.function.params:
            from_params.setdefault(cls, {})[node.value.value] = attributes[0]
            continue
        found = built_here(node.value, statement.function, facts, holders=holders)
        if found is not None:
            holders[cls] = f"holds {found.what} in '{attributes[0]}'"
    if not from_params:
        return holders
    constructions = _constructions(facts, set(from_params))
    for _ in range(_HOLDER_ROUNDS):
        changed = False
        for cls, params in from_params.items():
            if cls in holders:
                continue
            reason = _given_a_model(cls, params, constructions.get(cls, []), holders, facts)
            if reason is not None:
                holders[cls] = reason
                changed = True
        if not changed:
            break
    return holders


def _constructions(facts: ModuleFacts, classes: set[ClassInfo]) -> dict[ClassInfo, list[cst.Call]]:
    by_name = {cls.name: cls for cls in classes}
    found: dict[ClassInfo, list[cst.Call]] = {}
    for name, cls in by_name.items():
        for place in facts.index.calls_named(name):
            call = place.node
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and facts.structure.classes_by_name.get(name) is cls:
                found.setdefault(cls, []).append(call)
    return found


def _given_a_model(
    cls: ClassInfo, params: dict[str, str], calls: list[cst.Call], holders: dict[ClassInfo, str], facts: ModuleFacts
) -> str | None:
    """Why ``cls`` holds a model through a constructor argument: some construction passes a model,
    or an object of a class that holds one, for a parameter that ``__init__`` keeps on ``self``."""
    init = cls.find_method("__init__")
    info = facts.structure.functions.get(init) if init is not None else None
    if info is None:
        return None
    positional = [p for p in info.params[1:]]
    for call in calls:
        position = 0
        for arg in call.args:
            if arg.star:
                break
            if arg.keyword is not None:
                param = arg.keyword.value
            else:
                param = positional[position] if position < len(positional) else None
                position += 1
            if param not in params:
                continue
            value = facts.value(arg.value)
            if value.role is Role.MODEL and value.confidence >= Confidence.MEDIUM:
                return f"holds a model in '{params[param]}'"
            if value.role is Role.INSTANCE and isinstance(value.cls, ClassInfo) and value.cls in holders:
                return f"holds a '{value.cls.name}' in '{params[param]}', which {holders[value.cls]}"
    return None
