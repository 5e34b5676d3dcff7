"""Keras and TensorFlow models: which calls build or load one, which local classes and builder
functions make one, and which names hold one.

The provenance pass models torch; Keras rules (LL501-LL503) need the same question answered for
Keras: is ``model`` in ``model.predict(x)`` a Keras model? The answer comes from constructors and
loaders resolved through imports, local ``keras.Model`` subclasses and builder functions, the
assignments that bind their results, and ``compile`` calls with Keras-only arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Place
from leaklint.analysis.structure import FunctionInfo, bound_names
from leaklint.analysis.syntax import call_argument, declared_names
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.analysis.calls import CallGraph
    from leaklint.analysis.facts import ModuleFacts

KERAS_ROOTS = ("keras", "tensorflow.keras", "tensorflow.python.keras", "tf_keras")
_MODEL_CLASSES = frozenset({"Model", "Sequential", "Functional"})
_MODEL_LOADERS = frozenset({"load_model", "model_from_json", "model_from_yaml", "model_from_config", "clone_model"})
#: Keyword arguments only Keras's ``Model.compile`` takes (``nn.Module.compile`` forwards to torch.compile).
_KERAS_COMPILE_KEYWORDS = frozenset({"optimizer", "loss", "metrics", "loss_weights", "run_eagerly", "steps_per_execution", "jit_compile"})


def is_keras_name(qualified: str | None) -> bool:
    return bool(qualified) and any(qualified == r or qualified.startswith(r + ".") for r in KERAS_ROOTS)  # type: ignore[union-attr]


def is_keras_model_factory(qualified: str | None) -> bool:
    """``keras.Sequential``, ``tf.keras.Model``, ``keras.models.load_model``, ``tf.keras.applications.ResNet50``..."""
    if not is_keras_name(qualified):
        return False
    leaf = qualified.rsplit(".", 1)[-1]  # type: ignore[union-attr]
    if leaf in _MODEL_CLASSES or leaf in _MODEL_LOADERS:
        return True
    return ".applications." in qualified and leaf[:1].isupper()  # type: ignore[operator]


def is_model_loader(qualified: str | None) -> bool:
    return is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] in _MODEL_LOADERS  # type: ignore[union-attr]


#: Methods Keras runs for every batch, of a subclass of a Keras layer or model: ``call`` (every
#: forward pass, in ``fit`` inside its traced ``train_function``) and the custom steps ``fit`` /
#: ``evaluate`` / ``predict`` run.
KERAS_STEP_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
#: What a class must subclass for Keras to run its ``call``: a layer or a model.
_KERAS_LAYER_BASES = frozenset({"Layer", "Model", "Sequential"})


def is_keras_layer_method(info: FunctionInfo) -> bool:
    """A method of a subclass of a Keras layer or model (through the file's own classes too)."""
    cls = info.cls
    if cls is None:
        return False
    for base in cls.qualified_bases:
        if is_keras_name(base) and (base.rsplit(".", 1)[-1] in _KERAS_LAYER_BASES or ".layers." in base):
            return True
    return False


@dataclass(frozen=True)
class KerasEvidence:
    confidence: Confidence
    why: str


@dataclass
class KerasModels:
    """What the file says about Keras models: classes, builders, and names that hold models."""

    facts: ModuleFacts
    classes: set[str] = field(default_factory=set)
    #: Local functions (module-level or methods, by name) that build and return a Keras model.
    builders: dict[str, cst.FunctionDef] = field(default_factory=dict)
    #: (scope, dotted name) -> evidence; scope is a FunctionDef, a ClassDef (for ``self.x``) or None.
    names: dict[tuple[cst.CSTNode | None, str], KerasEvidence] = field(default_factory=dict)
    #: Dotted names compiled with Keras-only arguments anywhere in the file.
    compiled: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, facts: ModuleFacts) -> KerasModels:
        models = cls(facts)
        models._find_classes()
        models._find_builders()
        models._find_names()
        return models

    # --- construction ------------------------------------------------------------------------
    def _find_classes(self) -> None:
        """Local subclasses of ``keras.Model`` (also through local bases)."""
        changed = True
        while changed:
            changed = False
            for info in self.facts.structure.classes.values():
                if info.name in self.classes:
                    continue
                for base in info.base_names:
                    qualified = self.facts.imports.qualify(base)
                    if base in self.classes or (is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] in _MODEL_CLASSES):  # type: ignore[union-attr]
                        self.classes.add(info.name)
                        changed = True
                        break

    def _find_builders(self) -> None:
        """Functions whose own body constructs a Keras model and that return something."""
        for node, info in self.facts.structure.functions.items():
            if info.parent is not None:
                continue
            body = list(walk(node.body, into=not_into_scopes))
            builds = any(isinstance(n, cst.Call) and self.construction(n, builders=False) for n in body)
            returns = any(isinstance(n, cst.Return) and n.value is not None for n in body)
            if builds and returns:
                self.builders.setdefault(info.name, node)

    def construction(self, call: cst.Call, *, builders: bool = True) -> KerasEvidence | None:
        """Evidence that ``call`` returns a new Keras model (constructor, loader, class, builder)."""
        qualified = self.facts.imports.resolve(call.func)
        if is_keras_model_factory(qualified):
            return KerasEvidence(Confidence.HIGH, f"'{qualified}' returns a Keras model")
        func = call.func
        name = func.value if isinstance(func, cst.Name) else None
        if isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls"):
            name = func.attr.value
        if name is None:
            return None
        if isinstance(func, cst.Name) and name in self.classes:
            return KerasEvidence(Confidence.HIGH, f"'{name}' subclasses keras.Model")
        if builders and name in self.builders:
            return KerasEvidence(Confidence.HIGH, f"'{name}()' builds a Keras model")
        return None

    def _find_names(self) -> None:
        index = self.facts.index
        for place in index.calls_named("compile"):
            if isinstance(place.node.func, cst.Attribute):  # type: ignore[attr-defined]
                self._note_compile(place.node)  # type: ignore[arg-type]
        for _ in range(2):  # a second pass picks up aliases (m = model) bound before their source
            for place in index.assignments:
                node = place.node
                value = node.value  # type: ignore[attr-defined]
                if value is None:
                    continue
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]  # type: ignore[attr-defined]
                for target, bound in _paired(targets, value):
                    evidence = self.expression(bound, place)
                    if evidence is not None:
                        for name in bound_names(target):
                            self.names.setdefault((self._scope_key(place, name), name), evidence)

    def _note_compile(self, call: cst.Call) -> None:
        receiver = dotted_name(call.func.value)  # type: ignore[attr-defined]
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        strings = any(isinstance(a.value, cst.SimpleString) for a in call.args if a.keyword is None)
        if receiver and (keywords & _KERAS_COMPILE_KEYWORDS or strings):
            self.compiled.add(receiver)

    def _scope_key(self, place: Place, name: str) -> cst.CSTNode | None:
        info = place.function(self.facts)
        if name.startswith("self.") and info is not None and info.cls is not None:
            return info.cls.node
        scope = place.scope
        if not isinstance(scope, cst.FunctionDef) or name in declared_names(scope)[0]:
            return None
        return scope

    # --- queries -----------------------------------------------------------------------------
    def expression(self, expr: cst.BaseExpression, place: Place) -> KerasEvidence | None:
        """Evidence that ``expr`` (evaluated at ``place``) is a Keras model."""
        if isinstance(expr, cst.Call):
            return self.construction(expr)
        name = dotted_name(expr)
        return self.name(name, place) if name else None

    def name(self, name: str, place: Place) -> KerasEvidence | None:
        """Evidence that the dotted ``name`` holds a Keras model where ``place`` runs."""
        info = place.function(self.facts)
        keys: list[cst.CSTNode | None] = []
        if isinstance(place.scope, cst.FunctionDef):
            keys.append(place.scope)
            parent = info.parent if info is not None else None
            while parent is not None:
                keys.append(parent.node)
                parent = parent.parent
        if name.startswith("self.") and info is not None and info.cls is not None:
            keys.append(info.cls.node)
        keys.append(None)
        for key in keys:
            found = self.names.get((key, name))
            if found is not None:
                return found
        if name in self.compiled:
            return KerasEvidence(Confidence.HIGH, f"'{name}.compile(...)' takes Keras arguments")
        if name == "self" and info is not None and info.cls is not None and info.cls.name in self.classes:
            return KerasEvidence(Confidence.HIGH, f"'self' is a '{info.cls.name}', a keras.Model subclass")
        if name == "self.model" and info is not None and info.cls is not None and is_keras_callback(self.facts, info):
            return KerasEvidence(Confidence.HIGH, "a Keras callback's 'self.model' is the model being trained")
        return self._element(name, place)

    def _element(self, name: str, place: Place) -> KerasEvidence | None:
        """``model`` in ``for tag, model in models.items():`` / ``for model in models:`` where
        ``models`` holds Keras models (a literal or a comprehension of them)."""
        for loop in reversed(place.loop_nodes):
            if isinstance(loop, cst.For):
                target, iterable = loop.target, loop.iter
            elif isinstance(loop, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                target, iterable = loop.for_in.target, loop.for_in.iter
            else:
                continue
            container = iterable
            position: int | None = None  # which element of a tuple target gets the value
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("items", "values"):
                container = iterable.func.value
                position = 1 if iterable.func.attr.value == "items" else None
            names = bound_names(target) if position is None else (
                bound_names(target.elements[position].value) if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) > position else []
            )
            if name not in names:
                continue
            held = self._held(container, place)
            if held is not None:
                return KerasEvidence(held.confidence, f"'{name}' iterates over Keras models ({held.why})")
        return None

    def _held(self, container: cst.BaseExpression, place: Place) -> KerasEvidence | None:
        """Keras models held by a container: ``[build() for _ in range(3)]``, ``{t: load(t) for t in tags}``."""
        values: list[cst.BaseExpression] = []
        if isinstance(container, (cst.List, cst.Tuple, cst.Set)):
            values = [e.value for e in container.elements]
        elif isinstance(container, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            values = [container.elt]
        elif isinstance(container, cst.DictComp):
            values = [container.value]
        elif isinstance(container, cst.Dict):
            values = [e.value for e in container.elements if isinstance(e, cst.DictElement)]
        else:
            name = dotted_name(container)
            if name is None:
                return None
            for node in self._bindings_of(name, place):
                found = self._held(node, place)
                if found is not None:
                    return found
            return None
        for value in values:
            if isinstance(value, cst.Call):
                found = self.construction(value)
                if found is not None:
                    return found
        return None

    def _bindings_of(self, name: str, place: Place) -> list[cst.BaseExpression]:
        info = place.function(self.facts)
        scopes = [place.scope if isinstance(place.scope, cst.FunctionDef) else None, None]
        found = []
        for assignment in self.facts.index.assignments:
            node = assignment.node
            value = getattr(node, "value", None)
            if value is None:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]  # type: ignore[attr-defined]
            if any(name in bound_names(t) for t in targets) and (assignment.scope in scopes or info is None):
                found.append(value)
        return found

    def parameter(self, info: FunctionInfo, param: str, sites: CallGraph) -> KerasEvidence | None:
        """Evidence that parameter ``param`` of ``info`` receives a Keras model at a call site."""
        if param not in info.params:
            return None
        position = info.params.index(param) - (1 if info.is_method else 0)
        for site in sites.places_of(info):
            call = site.node
            assert isinstance(call, cst.Call)
            passed = call_argument(call, position, param)
            if passed is not None and self.expression(passed, site) is not None:
                return KerasEvidence(Confidence.MEDIUM, f"'{info.name}' is called with a Keras model as '{param}'")
        return None


def _paired(
    targets: list[cst.BaseExpression], value: cst.BaseExpression
) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """Each target with the value it gets: element by element for ``g, d = build_g(), build_d()``."""
    pairs = []
    for target in targets:
        if (
            isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))
        ):
            pairs.extend((t.value, v.value) for t, v in zip(target.elements, value.elements))
        else:
            pairs.append((target, value))
    return pairs


def keras_models(facts: ModuleFacts) -> KerasModels:
    """What ``facts.module`` says about Keras models, built once per file."""
    return facts.derived(KerasModels.of)


def is_keras_callback(facts: ModuleFacts, info: FunctionInfo | None = None, *, cls: object = None) -> bool:
    """Whether the class of ``info`` (or ``cls``, a ClassInfo) subclasses ``keras.callbacks.Callback``
    (through local bases too)."""
    current = cls if cls is not None else (info.cls if info is not None else None)
    seen = 0
    while current is not None and seen < 10:
        seen += 1
        for base in current.node.bases:  # type: ignore[attr-defined]
            qualified = facts.imports.resolve(base.value)
            if is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] in ("Callback", "TensorBoard", "ModelCheckpoint"):  # type: ignore[union-attr]
                return True
        locals_ = current.local_bases  # type: ignore[attr-defined]
        current = locals_[0] if locals_ else None
    return False


def is_keras_callback_hook(facts: ModuleFacts, info: FunctionInfo) -> bool:
    """A method Keras calls every batch or epoch: ``on_epoch_end``, ``on_train_batch_end``... of a
    ``keras.callbacks.Callback`` subclass."""
    return info.is_method and info.name.startswith("on_") and info.name not in _ONCE_HOOKS and is_keras_callback(facts, info)


_ONCE_HOOKS = frozenset({"on_train_begin", "on_train_end", "on_predict_begin", "on_predict_end", "on_test_begin", "on_test_end"})


#: Callables that call a function given to them once per trial or per configuration, with the
#: argument (position, keyword) that receives it: hyper-parameter searches. KerasTuner is not
#: one of them for LL503's purpose: its tuners call ``keras.backend.clear_session()`` before
#: building each trial's model (``kerastuner/engine/hypermodel.py`` since 1.0.0,
#: ``Tuner._try_build`` since 1.1.0).
TRIAL_RUNNERS: dict[str, tuple[int, str]] = {
    "hyperopt.fmin": (0, "fn"),
    "skopt.gp_minimize": (0, "func"),
    "skopt.forest_minimize": (0, "func"),
    "skopt.gbrt_minimize": (0, "func"),
    "skopt.dummy_minimize": (0, "func"),
    "ray.tune.run": (0, "run_or_experiment"),
    "ray.tune.Tuner": (0, "trainable"),
}


def per_trial_functions(facts: ModuleFacts) -> dict[FunctionInfo, str]:
    """Local functions a hyper-parameter search calls once per trial: an Optuna objective
    (``study.optimize(objective)``), a hyperopt / scikit-optimize / Ray Tune objective; with the
    call that runs them."""
    return facts.derived(_per_trial_functions)


def _per_trial_functions(facts: ModuleFacts) -> dict[FunctionInfo, str]:
    found: dict[FunctionInfo, str] = {}
    optuna = facts.imports.imports_anything_from("optuna")
    for place in facts.index.ordered_calls:
        call = place.node
        assert isinstance(call, cst.Call)
        qualified = facts.imports.resolve(call.func) or ""
        slot: tuple[int, str] | None = TRIAL_RUNNERS.get(qualified)
        if slot is None and optuna and isinstance(call.func, cst.Attribute) and call.func.attr.value == "optimize" and not qualified:
            slot = (0, "func")
        if slot is None:
            continue
        passed = call_argument(call, *slot)
        node = None
        if isinstance(passed, cst.Name):
            node = facts.structure.module_functions.get(passed.value)
        elif isinstance(passed, cst.Attribute) and isinstance(passed.value, cst.Name) and passed.value.value in ("self", "cls"):
            caller = place.function(facts)  # fmin(self.objective, ...): a method of the caller's class
            if caller is not None and caller.cls is not None:
                node = caller.cls.find_method(passed.attr.value)
        info = facts.structure.functions.get(node) if node is not None else None
        if info is not None:
            found.setdefault(info, f"called once per trial by '{facts.describe(call.func)}'")
    return found
