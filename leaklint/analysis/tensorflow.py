"""TensorFlow: which calls add ops to a graph, which values are graph tensors, which calls run a
session, and which local object a method call runs on.

TensorFlow 1 (and ``tf.compat.v1`` with eager execution off, and standalone Keras 2 on that
backend) builds a graph first and runs it in a session. Every op-building call (``tf.assign``,
``tf.image.encode_jpeg``, ``-tensor``, ``tensor[0]``, ``K.function``) adds nodes to the default
graph, and nothing ever removes them: building ops inside the loop that runs the session grows
the graph every step. The questions rules ask about such code are answered here, from the
library's own vocabulary (the tables below) and the file's dataflow:

- is the file graph-mode code at all (:attr:`TfGraph.graph_mode`)?
- does a call build ops (:func:`builds_op`) or run the graph (:meth:`TfGraph.runs_graph`)?
- is an expression a graph tensor, variable, op or iterator (:meth:`TfGraph.is_graph_value`)?
- which local class is an object, so that ``agent.train(...)`` runs ``ActorCritic.train``
  (:meth:`TfGraph.callee`)?
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Iterator, Sequence

import libcst as cst

from leaklint.analysis.calls import callee_name, caller_of, function_named
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.keras import is_keras_callback_hook, is_keras_name, keras_models
from leaklint.analysis.names import ImportMap, dotted_name
from leaklint.analysis.places import COMPREHENSIONS, Place, walk_with_ancestors
from leaklint.analysis.structure import ClassInfo, FunctionInfo, bound_names, inner_iterable
from leaklint.analysis.syntax import call_argument, declared_names
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts

# --- what TensorFlow's names mean -------------------------------------------------------------
_TF_PREFIXES = ("tensorflow.compat.v1.", "tensorflow.compat.v2.", "tensorflow.")
_KERAS_BACKEND_PREFIXES = (
    "keras.backend.",
    "tensorflow.keras.backend.",
    "tensorflow.python.keras.backend.",
    "tensorflow.compat.v1.keras.backend.",
    "tf_keras.backend.",
)

#: APIs (under ``tensorflow.``, compat prefixes removed) that add nothing to the graph: sessions,
#: configuration, protocol buffers, file I/O, collections and scopes, lookups of existing
#: variables, Keras (layers and models are LL503's business). Among them, as their documentation
#: says:
#: - the TensorBoard projector plugin (``ProjectorConfig`` is a protocol buffer, and
#:   ``visualize_embeddings(writer, config)`` "stores a config file used by the embedding
#:   projector", ``projector_config.pbtxt`` in the writer's log directory):
#:   https://www.tensorflow.org/versions/r1.15/api_docs/python/tf/contrib/tensorboard/plugins/projector/visualize_embeddings
#: - ``load_op_library(path)`` loads a plugin's kernels and returns a Python module of op
#:   wrappers (calling a wrapper builds an op, loading builds none; see
#:   :meth:`TfGraph.is_custom_op_call`): https://www.tensorflow.org/api_docs/python/tf/load_op_library
_NON_OP_PREFIXES = (
    "contrib.tensorboard.plugins.projector.",
    "keras.", "estimator.", "app.", "flags.", "logging.", "gfile.", "io.gfile.", "python_io.", "errors.",
    "sysconfig.", "test.", "compat.", "distribute.", "tpu.", "lite.", "config.", "feature_column.",
    "saved_model.utils.", "saved_model.signature_def_utils.", "saved_model.builder.", "profiler.",
    "data.experimental.AUTOTUNE", "nest.", "autograph.", "experimental.", "types.", "dtypes.",
    "summary.FileWriter", "summary.create_file_writer", "summary.Summary", "Summary", "train.Example",
    "train.Feature", "train.BytesList", "train.FloatList", "train.Int64List", "train.SequenceExample",
    "train.Checkpoint", "train.CheckpointManager", "train.Coordinator", "train.Server", "train.ClusterSpec",
)
_NON_OP_APIS = frozenset(
    {
        "Session", "InteractiveSession", "get_default_session", "get_default_graph", "reset_default_graph",
        "Graph", "ConfigProto", "GPUOptions", "RunOptions", "RunMetadata", "GraphOptions", "OptimizerOptions",
        "function", "py_function_wrapper", "executing_eagerly", "enable_eager_execution", "disable_eager_execution",
        "disable_v2_behavior", "enable_v2_behavior", "set_random_seed", "random.set_seed", "get_logger",
        "get_collection", "get_collection_ref", "add_to_collection", "add_to_collections", "trainable_variables",
        "global_variables", "local_variables", "all_variables", "model_variables", "moving_average_variables",
        "get_variable", "get_local_variable", "variable_scope", "name_scope", "device", "control_dependencies",
        "colocate_with", "get_variable_scope", "GraphKeys", "as_dtype", "DType", "TensorShape", "Dimension",
        "TensorSpec", "make_ndarray", "make_tensor_proto", "is_tensor", "FixedLenFeature", "VarLenFeature",
        "FixedLenSequenceFeature", "io.FixedLenFeature", "io.VarLenFeature", "io.FixedLenSequenceFeature",
        "io.TFRecordWriter", "io.TFRecordOptions", "train.latest_checkpoint", "train.get_checkpoint_state",
        "train.checkpoint_exists", "train.list_variables", "train.load_variable", "train.NewCheckpointReader",
        "train.load_checkpoint", "train.get_global_step", "train.get_or_create_global_step",
        "train.start_queue_runners", "train.write_graph", "train.import_meta_graph", "train.export_meta_graph",
        "train.ExponentialMovingAverage", "train.summary_iterator", "summary.FileWriterCache",
        "summary.record_if", "summary.should_record_summaries", "summary.flush", "debugging.set_log_device_placement",
        "reset_default_graph", "get_seed", "print_function", "contrib.training.HParams", "placeholder_with_default_spec",
        "VERSION", "version", "global_norm_spec", "load_op_library",
    }
)
#: Classes whose construction adds ops or variables to the graph (other classes do not).
_OP_CLASSES = frozenset(
    {
        "Variable", "train.Saver", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue",
        "TextLineReader", "TFRecordReader", "WholeFileReader", "FixedLengthRecordReader", "IdentityReader",
        "SparseTensor", "data.TFRecordDataset", "data.TextLineDataset", "data.FixedLengthRecordDataset",
    }
)
#: Keras backend functions that add nothing to the graph.
_KERAS_BACKEND_NON_OP = frozenset(
    {
        "get_session", "set_session", "clear_session", "learning_phase", "set_learning_phase", "backend",
        "image_data_format", "set_image_data_format", "image_dim_ordering", "set_image_dim_ordering", "epsilon",
        "set_epsilon", "floatx", "set_floatx", "int_shape", "ndim", "dtype", "is_keras_tensor", "is_tensor",
        "get_value", "batch_get_value", "set_value", "batch_set_value", "eval", "name_scope",
        "manual_variable_initialization", "get_uid", "reset_uids", "count_params", "is_sparse", "is_placeholder",
        "cast_to_floatx", "get_graph", "is_symbolic", "symbolic", "eager", "shape_spec",
    }
)
#: Calls that put a file in graph mode or only work there.
_GRAPH_MODE_APIS = frozenset(
    {
        "Session", "InteractiveSession", "train.MonitoredSession", "train.MonitoredTrainingSession",
        "train.SingularMonitoredSession", "train.Supervisor", "disable_v2_behavior", "disable_eager_execution",
        "placeholder", "placeholder_with_default", "get_default_session", "gradients",
    }
)
_KERAS_BACKEND_GRAPH_MODE = frozenset({"get_session", "gradients", "function", "placeholder"})
#: Keras backend functions that run the graph.
_KERAS_BACKEND_RUNS = frozenset({"get_value", "batch_get_value", "eval", "set_value", "batch_set_value"})
#: Methods of graph values (variables, iterators, optimizers, datasets) that add ops.
OP_METHODS = frozenset(
    {
        "assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub", "scatter_nd_update",
        "scatter_nd_add", "scatter_nd_sub", "read_value", "initialized_value", "count_up_to", "get_next",
        "minimize", "compute_gradients", "apply_gradients", "make_one_shot_iterator", "make_initializable_iterator",
        "make_initializer", "batch", "map", "shuffle", "repeat", "prefetch", "padded_batch", "filter", "cache",
    }
)
#: Of :data:`OP_METHODS`, those returning a tuple or an object rather than one tensor.
_COLLECTION_METHODS = frozenset(
    {"get_next", "compute_gradients", "make_one_shot_iterator", "make_initializable_iterator", "make_initializer", "batch", "map",
     "shuffle", "repeat", "prefetch", "padded_batch", "filter", "cache", "minimize", "apply_gradients"}
)
#: Op-building APIs that return a list, a tuple or an object, not one tensor (indexing the result
#: adds nothing to the graph).
_COLLECTION_APIS = frozenset(
    {
        "split", "unstack", "meshgrid", "gradients", "while_loop", "nn.moments", "unique", "nn.top_k", "math.top_k",
        "nn.dynamic_rnn", "nn.bidirectional_dynamic_rnn", "nn.static_rnn", "train.Saver", "FIFOQueue",
        "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue", "TextLineReader", "TFRecordReader",
        "WholeFileReader", "FixedLengthRecordReader", "IdentityReader", "map_fn", "tuple", "group", "py_func",
        "numpy_function", "py_function", "data.make_one_shot_iterator", "data.make_initializable_iterator",
        "clip_by_global_norm", "nn.ctc_beam_search_decoder", "nn.ctc_greedy_decoder", "image.combined_non_max_suppression",
    }
)
_KERAS_BACKEND_COLLECTIONS = frozenset({"gradients", "function", "rnn", "batch_get_value", "ctc_decode"})
#: APIs that add nothing but return graph values that exist already: variables, collections.
_EXISTING_TENSOR_APIS = frozenset({"get_variable", "get_local_variable", "train.get_global_step", "train.get_or_create_global_step"})
_EXISTING_COLLECTION_APIS = frozenset(
    {"trainable_variables", "global_variables", "local_variables", "all_variables", "model_variables",
     "moving_average_variables", "get_collection", "get_collection_ref"}
)
TENSOR = "tensor"
COLLECTION = "collection"
#: List methods that put a value into the list (with how many positional arguments they take;
#: the value is the last one).
_LIST_FILLERS = {"append": 1, "insert": 2, "extend": 1}
#: Methods that return an existing tensor of a graph (no new op): ``graph.get_tensor_by_name("x:0")``.
_LOOKUP_METHODS = frozenset({"get_tensor_by_name", "get_operation_by_name"})
#: Attributes of a Keras model or layer that are graph tensors on the graph backend.
_KERAS_SYMBOLIC_ATTRIBUTES = frozenset({"output", "outputs", "input", "inputs", "total_loss", "targets", "sample_weights"})
_KERAS_SYMBOLIC_TENSORS = frozenset({"output", "input", "total_loss"})
#: Keras model methods that run the graph (on the TF1 backend, through the backend session).
_KERAS_RUN_METHODS = frozenset(
    {"fit", "fit_generator", "predict", "predict_on_batch", "predict_generator", "train_on_batch",
     "test_on_batch", "evaluate", "evaluate_generator"}
)
#: Modules whose ``run`` is not a session's (``subprocess.run``, ``tf.app.run``, ``absl.app.run``).
_NOT_SESSION_RUN_ROOTS = ("subprocess", "absl", "asyncio", "tensorflow", "trio", "uvicorn", "anyio", "ray", "multiprocessing")
_ARITHMETIC_UNARY = (cst.Minus, cst.Plus, cst.BitInvert)
_ORDER_COMPARISONS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)
_CLASS_NAME = re.compile(r"^_?[A-Z]")


def tf_api(qualified: str | None) -> str | None:
    """``image.encode_jpeg`` for ``tensorflow.compat.v1.image.encode_jpeg``; None outside TensorFlow."""
    if not qualified:
        return None
    for prefix in _TF_PREFIXES:
        if qualified.startswith(prefix):
            return qualified[len(prefix):]
    return None


def keras_backend_api(qualified: str | None) -> str | None:
    """``function`` for ``keras.backend.function`` / ``tf.keras.backend.function``."""
    if not qualified:
        return None
    for prefix in _KERAS_BACKEND_PREFIXES:
        if qualified.startswith(prefix):
            return qualified[len(prefix):]
    return None


def is_op_api(qualified: str | None) -> bool:
    """Whether calling ``qualified`` adds ops to the graph (on the graph backend)."""
    backend = keras_backend_api(qualified)
    if backend is not None:
        return backend not in _KERAS_BACKEND_NON_OP
    api = tf_api(qualified)
    if api is None or api in _NON_OP_APIS or api.startswith(_NON_OP_PREFIXES):
        return False
    if api.startswith("compat.") or api.startswith("python."):
        return False
    leaf = api.rsplit(".", 1)[-1]
    if _CLASS_NAME.match(leaf):
        return api in _OP_CLASSES or leaf in _OP_CLASSES
    return True


def returns_collection(qualified: str | None) -> bool:
    """An op-building API whose result is a list, tuple or object (``tf.split``, ``tf.metrics.auc``)."""
    backend = keras_backend_api(qualified)
    if backend is not None:
        return backend in _KERAS_BACKEND_COLLECTIONS
    api = tf_api(qualified) or ""
    return api in _COLLECTION_APIS or api.startswith(("metrics.", "data.")) or api.rsplit(".", 1)[-1] in _COLLECTION_APIS


def is_graph_mode_api(qualified: str | None) -> bool:
    backend = keras_backend_api(qualified)
    if backend is not None:
        return backend in _KERAS_BACKEND_GRAPH_MODE
    return tf_api(qualified) in _GRAPH_MODE_APIS


def is_graph_reset(qualified: str | None) -> bool:
    """``tf.reset_default_graph()`` / ``K.clear_session()``: what follows builds in a fresh graph."""
    return tf_api(qualified) == "reset_default_graph" or (
        is_keras_name(qualified) and qualified.rsplit(".", 1)[-1] == "clear_session"  # type: ignore[union-attr]
    )


# --- the file's facts -------------------------------------------------------------------------
_Key = tuple[object, str]


@dataclass(frozen=True)
class Site:
    """Where an expression is evaluated: its scope keys (innermost first: functions and lambdas,
    then the module, None), its position in source order (-1: anywhere), and the loops around it
    in its own scope."""

    scopes: Site = (None,)
    order: int = -1
    loops: frozenset[int] = frozenset()


@dataclass
class TfGraph:
    """What one file says about TensorFlow graphs: graph mode, graph values, runs, local calls."""

    facts: ModuleFacts
    graph_mode: bool = False
    #: Some graph of the file is finalized (``sess.graph.finalize()``): adding an op raises.
    finalized: bool = False
    #: (scope key, dotted name) -> the expressions bound to it (``_Bound``).
    bindings: dict[_Key, list[_Bound]] = field(default_factory=dict)
    #: Names bound in a scope by anything (parameters included): they hide outer bindings.
    bound_here: set[_Key] = field(default_factory=set)
    #: Every call, with its place, in source order.
    calls: list[Place] = field(default_factory=list)
    _graph_memo: dict[int, str | None] = field(default_factory=dict)
    _returns_memo: dict[cst.FunctionDef, str | None] = field(default_factory=dict)
    _class_memo: dict[tuple[int, int], ClassInfo | None] = field(default_factory=dict)
    #: Source order of the nodes the scan visits (calls, bindings, operators, returns).
    order: dict[int, int] = field(default_factory=dict)
    _declared_globals: dict[cst.FunctionDef, set[str]] = field(default_factory=dict)
    #: (scope key, name) -> source order of each ``def`` of that name in that scope, and of each
    #: statement that binds the name to something else there (``f = wrap(f)``, ``for f in ...``).
    _def_orders: dict[_Key, list[int]] = field(default_factory=dict)
    _rebind_orders: dict[_Key, list[int]] = field(default_factory=dict)
    #: (scope key, dotted name) -> what is put into the list it holds (``xs.append(v)``: ``v``
    #: with ``element`` False; ``xs.extend(vs)``: ``vs`` with ``element`` True).
    contents: dict[_Key, list[_Bound]] = field(default_factory=dict)

    @classmethod
    def of(cls, facts: ModuleFacts) -> TfGraph:
        tf = cls(facts)
        tf._scan()
        return tf

    # --- scanning -------------------------------------------------------------------------------
    def _scan(self) -> None:
        imports = self.facts.imports
        wanted = (
            cst.Call, cst.Assign, cst.AnnAssign, cst.For, cst.CompFor, cst.WithItem, cst.FunctionDef, cst.Lambda,
            cst.Return, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Comparison,
        )

        def want(node: cst.CSTNode) -> bool:
            return isinstance(node, wanted)

        finalizing: list[tuple[cst.BaseExpression, Place]] = []
        for node, path in walk_with_ancestors(self.facts.module, want):
            self.order[id(node)] = len(self.order)
            place = Place(node, path)
            if isinstance(node, cst.Call):
                self.calls.append(place)
                qualified = imports.resolve(node.func)
                if is_graph_mode_api(qualified):
                    self.graph_mode = True
                if isinstance(node.func, cst.Attribute) and node.func.attr.value == "finalize" and not node.args:
                    finalizing.append((node.func.value, place))
                if qualified is None:
                    self._note_contents(place, node)
            elif isinstance(node, (cst.FunctionDef, cst.Lambda)):
                params = node.params
                for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                    self.bound_here.add((node, param.name.value))
                for star in (params.star_arg, params.star_kwarg):
                    if isinstance(star, cst.Param):
                        self.bound_here.add((node, star.name.value))
                if isinstance(node, cst.FunctionDef):
                    key = (self._key_scope(place, node.name.value), node.name.value)
                    self.bound_here.add(key)
                    if not isinstance(place.scope, cst.ClassDef):
                        self._def_orders.setdefault(key, []).append(self.order[id(node)])
            elif isinstance(node, cst.Assign):
                for target in node.targets:
                    unpacked = isinstance(target.target, (cst.Tuple, cst.List))
                    self._bind(place, target.target, node.value, element=unpacked)
                    self._note_rebinding(place, target.target, node.value)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                self._bind(place, node.target, node.value)
                self._note_rebinding(place, node.target, node.value)
            elif isinstance(node, cst.For):
                self._bind_iteration(place, node.target, node.iter, node)
            elif isinstance(node, cst.CompFor):
                comprehension = next((p for p in reversed(path) if isinstance(p, COMPREHENSIONS)), None)
                self._bind_iteration(place, node.target, node.iter, comprehension)
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                self._bind(place, node.asname.name, node.item)
                self._note_rebinding(place, node.asname.name)
        self.finalized = any(self.is_graph_object(expr, self.scopes_of(place)) for expr, place in finalizing)

    def is_graph_object(self, expr: cst.BaseExpression, scopes: Site) -> bool:
        """A ``tf.Graph``: ``sess.graph``, ``tf.get_default_graph()``, ``tf.Graph()``, or a name
        bound to one of them."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "graph":
            return True
        if isinstance(expr, cst.Call):
            return tf_api(self.facts.imports.resolve(expr.func)) in ("Graph", "get_default_graph") or (
                keras_backend_api(self.facts.imports.resolve(expr.func)) == "get_graph"
            )
        name = dotted_name(expr)
        bound = self._lookup(name, scopes) if name else None
        return bool(bound) and all(
            b.value is not None and not b.element and not isinstance(b.value, cst.Name) and self.is_graph_object(b.value, b.scopes)
            for b in bound
        )

    def _bind(
        self, place: Place, target: cst.BaseExpression, value: cst.BaseExpression | None, *, element: bool = False,
        loop: cst.CSTNode | None = None,
    ) -> None:
        site = self.scopes_of(place)
        if loop is not None:  # a loop's target is bound anew in each of its iterations
            site = Site(site.scopes, site.order, site.loops | {id(loop)})
        bound = _Bound(value, site, element)
        for name in bound_names(target):
            key = (self._key_scope(place, name), name)
            self.bindings.setdefault(key, []).append(bound)
            self.bound_here.add(key)

    def _note_rebinding(self, place: Place, target: cst.BaseExpression, value: cst.BaseExpression | None = None) -> None:
        """A statement binds plain names of ``target`` in its scope (not in a class body, whose
        names are attributes): where a ``def`` of the same name is, the name stops meaning it.
        Only a statement that surely runs when its scope does (not under an ``if``, in a loop or
        a ``try``), and not ``f = functools.partial(f, ...)``, which still runs ``f``."""
        if isinstance(place.scope, cst.ClassDef) or not _runs_unconditionally(place):
            return
        for name in bound_names(target):
            if "." in name or _partial_of(value, name, self.facts.imports):
                continue
            self._rebind_orders.setdefault((self._key_scope(place, name), name), []).append(self.order[id(place.node)])

    def _bind_iteration(
        self, place: Place, target: cst.BaseExpression, iterable: cst.BaseExpression, loop: cst.CSTNode | None
    ) -> None:
        """``for v in tf.trainable_variables()``: ``v`` is an element; ``for a, b in zip(A, B)``:
        ``a`` an element of ``A``; ``for i, x in enumerate(X)``: ``x`` an element of ``X``."""
        sources: list[cst.BaseExpression | None] = [iterable]
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and isinstance(target, (cst.Tuple, cst.List)):
            args = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if iterable.func.value == "zip":
                sources = args  # type: ignore[assignment]
            elif iterable.func.value == "enumerate" and args:
                sources = [None, args[0]]
        if isinstance(target, (cst.Tuple, cst.List)) and len(sources) > 1:
            for element, source in zip(target.elements, sources):
                if source is not None:
                    self._bind(place, element.value, source, element=True, loop=loop)
                else:
                    self._bind(place, element.value, None, loop=loop)
            for element in target.elements[len(sources):]:
                self._bind(place, element.value, None, loop=loop)
            return
        self._bind(place, target, iterable, element=True, loop=loop)

    def _note_contents(self, place: Place, call: cst.Call) -> None:
        """``xs.append(v)``, ``xs.insert(i, v)``, ``xs.extend(vs)`` on a name or attribute: what
        the list it holds is filled with (``self.weights.append(w)`` in ``__init__``)."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _LIST_FILLERS:
            return
        name = dotted_name(func.value)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if name is None or len(args) != _LIST_FILLERS[func.attr.value]:
            return
        key = (self._key_scope(place, name), name)
        self.contents.setdefault(key, []).append(_Bound(args[-1], self.scopes_of(place), func.attr.value == "extend"))

    def _contents_kind(self, name: str, scopes: Site, depth: int) -> str | None:
        """:data:`COLLECTION` when the list ``name`` holds is filled with graph values (see
        :attr:`contents`), found in the scope where ``name`` is bound, as :meth:`_lookup` does."""
        if name.startswith("self."):
            found: list[_Bound] | None = None
            for scope in scopes.scopes:
                if isinstance(scope, cst.FunctionDef):
                    info = self.facts.structure.functions.get(scope)
                    if info is not None and info.cls is not None:
                        found = self.contents.get((info.cls.node, name))
                        break
        else:
            head = name.split(".", 1)[0]
            found = None
            for scope in scopes.scopes:
                if (scope, head) in self.bound_here or (scope, name) in self.bindings:
                    found = self.contents.get((scope, name))
                    break
        for put in found or ():
            if put.value is not None and self.graph_kind(put.value, put.scopes, depth) is not None:
                return COLLECTION
        return None

    def _key_scope(self, place: Place, name: str) -> object:
        """Where a binding of ``name`` at ``place`` is visible: the class for ``self.x``, the
        innermost function or lambda, or the module (None)."""
        chain = place.path
        function = None
        for node in reversed(chain):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                function = node
                break
        if name.startswith("self.") and isinstance(function, cst.FunctionDef):
            info = self.facts.structure.functions.get(function)
            if info is not None and info.cls is not None:
                return info.cls.node
        if isinstance(function, cst.FunctionDef) and name.split(".", 1)[0] in self._globals_of(function):
            return None
        return function

    def _globals_of(self, function: cst.FunctionDef) -> set[str]:
        """The names ``function`` declares ``global``, read once per function (every binding asks)."""
        found = self._declared_globals.get(function)
        if found is None:
            found = self._declared_globals[function] = declared_names(function)[0]
        return found

    def scopes_of(self, place: Place) -> Site:
        """Where ``place`` is evaluated (see :class:`Site`)."""
        keys: list[object] = []
        for node in reversed(place.path):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                keys.append(node)
        keys.append(None)
        return Site(tuple(keys), self.order.get(id(place.node), -1), frozenset(id(loop) for loop in place.loop_nodes))

    def lookup(self, name: str, site: Site) -> list[Binding] | None:
        """The bindings of ``name`` that may reach ``site``: their expressions (``value``, None
        when unknown), where they happen (``site``) and whether the name gets an element of the
        expression (``element``: a loop target, an unpacked tuple); None for a parameter or
        another binding whose value cannot be seen, an empty list when the file binds it nowhere."""
        return self._lookup(name, site)

    def _lookup(self, name: str, site: Site) -> list[_Bound] | None:
        """The bindings of ``name`` that may reach ``site``; None when it is bound by something
        we cannot see (a parameter), an empty list when nowhere."""
        scopes = site.scopes
        if name.startswith("self."):
            for scope in scopes:
                if isinstance(scope, cst.FunctionDef):
                    info = self.facts.structure.functions.get(scope)
                    if info is not None and info.cls is not None:
                        found = self.bindings.get((info.cls.node, name))
                        return found if found is not None else []
            return []
        head = name.split(".", 1)[0]
        for scope in scopes:
            if (scope, head) in self.bound_here or (scope, name) in self.bindings:
                found = self.bindings.get((scope, name))
                if found is None:
                    return None if (scope, head) in self.bound_here and "." not in name else []
                return _reaching(found, site) if scope is scopes[0] else found
        return []

    # --- graph values ---------------------------------------------------------------------------
    def _is_graph(self, expr: cst.BaseExpression, place: Place) -> bool:
        return self.is_graph_value(expr, self.scopes_of(place))

    def is_graph_value(self, expr: cst.BaseExpression, scopes: Site) -> bool:
        """Whether ``expr`` is a graph tensor, variable, op, iterator or a collection of them
        (something ``sess.run`` fetches), evaluated where ``scopes`` apply."""
        return self.graph_kind(expr, scopes) is not None

    def is_tensor(self, expr: cst.BaseExpression, scopes: Site) -> bool:
        """Whether ``expr`` is one graph tensor or variable (``-x``, ``x[0]``, ``x * 2`` add ops),
        not a list or tuple of them (``xs[0]`` indexes a Python list)."""
        return self.graph_kind(expr, scopes) == TENSOR

    def graph_kind(self, expr: cst.BaseExpression, scopes: Site, depth: int = 0) -> str | None:
        """:data:`TENSOR`, :data:`COLLECTION` (a list, tuple or object of graph values) or None."""
        memo_key = id(expr)
        if memo_key in self._graph_memo:
            return self._graph_memo[memo_key]
        if depth > 12:
            return None
        self._graph_memo[memo_key] = None  # a cycle (``x = x + y``) adds no evidence
        found = self._graph_kind(expr, scopes, depth + 1)
        self._graph_memo[memo_key] = found
        return found

    def _graph_kind(self, expr: cst.BaseExpression, scopes: Site, depth: int) -> str | None:
        imports = self.facts.imports
        if isinstance(expr, cst.Call):
            func = expr.func
            qualified = imports.resolve(func)
            if is_op_api(qualified):
                return COLLECTION if returns_collection(qualified) else TENSOR
            api = tf_api(qualified)
            if api in _EXISTING_TENSOR_APIS:
                return TENSOR
            if api in _EXISTING_COLLECTION_APIS:
                return COLLECTION
            if qualified is not None:
                return None
            if self.is_custom_op_call(expr, scopes):
                return TENSOR
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in _LOOKUP_METHODS:
                    return TENSOR
                if method in OP_METHODS and self.graph_kind(func.value, scopes, depth) is not None:
                    return COLLECTION if method in _COLLECTION_METHODS else TENSOR
            if self.is_optimizer_call(expr, scopes):
                return COLLECTION
            inner = inner_iterable(expr)
            if inner is not expr and isinstance(func, cst.Name) and self._lookup(func.value, scopes) == []:
                # `sorted(tf.trainable_variables(), key=...)`: the same graph values, reordered
                return COLLECTION if self.graph_kind(inner, scopes, depth) is not None else None
            function = self._local_function(func, scopes)
            return self.returns_kind(function) if function is not None else None
        if isinstance(expr, (cst.Name, cst.Attribute)):
            if isinstance(expr, cst.Attribute) and expr.attr.value in _KERAS_SYMBOLIC_ATTRIBUTES and self._is_keras_object(expr.value, scopes):
                return TENSOR if expr.attr.value in _KERAS_SYMBOLIC_TENSORS else COLLECTION
            name = dotted_name(expr)
            if name is None or imports.resolve(expr) is not None:
                return None
            bound = self._lookup(name, scopes)
            if not bound:
                return None
            kind: str | None = None
            for binding in bound:
                if binding.value is None:
                    continue
                if binding.runs(self):
                    return None  # also bound to fetched values: not reliably a tensor
                found = self.graph_kind(binding.value, binding.scopes, depth)
                if found is not None and binding.element:
                    found = TENSOR
                if found is not None and (kind is None or found == TENSOR):
                    kind = found
            if kind is None:
                # `self.weights = []` ... `self.weights.append(tf.get_variable(...))`
                kind = self._contents_kind(name, scopes, depth)
            return kind
        if isinstance(expr, cst.Subscript):
            return TENSOR if self.graph_kind(expr.value, scopes, depth) is not None else None
        if isinstance(expr, cst.BinaryOperation):
            kinds = (self.graph_kind(expr.left, scopes, depth), self.graph_kind(expr.right, scopes, depth))
            if TENSOR in kinds:
                return TENSOR
            # `self.weights + self.biases`: two lists of graph values, joined
            return COLLECTION if isinstance(expr.operator, cst.Add) and COLLECTION in kinds else None
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, _ARITHMETIC_UNARY):
            return TENSOR if self.graph_kind(expr.expression, scopes, depth) == TENSOR else None
        if isinstance(expr, (cst.Tuple, cst.List)):
            graph = any(
                not isinstance(e, cst.StarredElement) and self.graph_kind(e.value, scopes, depth) is not None for e in expr.elements
            )
            return COLLECTION if graph else None
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return COLLECTION if self.graph_kind(expr.elt, scopes, depth) is not None else None
        return None

    def picked_by(self, expr: cst.BaseExpression, loop: cst.CSTNode, place: Place) -> bool:
        """``expr`` (at ``place``) is an existing variable of the graph that ``loop`` picks with
        its item: looked up by a name computed from the loop's target (``tf.get_variable(name)``,
        ``graph.get_tensor_by_name(name)``), or under ``with tf.variable_scope(scope):`` inside
        the loop for a ``scope`` computed from it; directly, or through a name bound to such a
        lookup in the loop. A loop that builds one op per variable it picks this way is a pass
        over the model's variables, however often each pass runs."""
        if not isinstance(loop, cst.For):
            return False
        targets = set(bound_names(loop.target))
        if not targets:
            return False
        in_loop = False
        scoped = False
        for node in place.path:
            if node is loop.body:
                in_loop = True
            elif in_loop and isinstance(node, cst.With):
                scoped = scoped or any(self._scope_named_by(item.item, targets) for item in node.items)
        if not in_loop:
            return False
        if isinstance(expr, cst.Call):
            return self._is_lookup(expr) and (scoped or _mentions_any(expr.args, targets))
        name = dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        if name is None or self.facts.imports.resolve(expr) is not None:
            return False
        bound = self._lookup(name, self.scopes_of(place))
        return bool(bound) and all(
            isinstance(b.value, cst.Call) and not b.element and id(loop) in b.site.loops and self._is_lookup(b.value)
            and (scoped or _mentions_any(b.value.args, targets))
            for b in bound
        )

    def _is_lookup(self, call: cst.Call) -> bool:
        """A call that returns a variable or tensor the graph has already, by its name."""
        if tf_api(self.facts.imports.resolve(call.func)) in _EXISTING_TENSOR_APIS:
            return True
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in _LOOKUP_METHODS

    def _scope_named_by(self, item: cst.BaseExpression, targets: set[str]) -> bool:
        """``tf.variable_scope(name, ...)`` for a ``name`` computed from one of ``targets``."""
        if not isinstance(item, cst.Call) or tf_api(self.facts.imports.resolve(item.func)) != "variable_scope":
            return False
        first = call_argument(item, 0, "name_or_scope")
        return first is not None and _mentions_any([first], targets)

    def _is_keras_object(self, expr: cst.BaseExpression, scopes: Site, depth: int = 0) -> bool:
        """A Keras layer or model: ``model.get_layer("x")``, ``model.layers[-1]``, a name the file
        builds or loads a Keras model into, or a parameter every caller passes one to."""
        if depth > 3:
            return False
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get_layer":
            return True
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "layers":
            return True
        if isinstance(expr, cst.Call):
            return keras_models(self.facts).construction(expr) is not None
        name = dotted_name(expr)
        if name is None:
            return False
        bound = self._lookup(name, scopes)
        if bound:
            return any(b.value is not None and not b.element and self._is_keras_object(b.value, b.site, depth + 1) for b in bound)
        innermost = scopes.scopes[0]
        function = self.facts.structure.functions.get(innermost) if isinstance(innermost, cst.FunctionDef) else None
        if bound is not None or function is None or name not in function.params:
            return False
        position = function.params.index(name) - (1 if function.is_method else 0)
        passed = [
            (argument, site)
            for site in self.call_sites(function)
            for argument in [call_argument(site.node, position, name)]  # type: ignore[arg-type]
            if argument is not None
        ]
        return bool(passed) and all(self._is_keras_object(a, self.scopes_of(site), depth + 1) for a, site in passed)

    def _local_function(self, func: cst.BaseExpression, scopes: Site) -> FunctionInfo | None:
        structure = self.facts.structure
        if isinstance(func, cst.Name):
            node: cst.FunctionDef | None = None
            for scope in scopes.scopes:
                if isinstance(scope, cst.FunctionDef):
                    info = structure.functions.get(scope)
                    if info is not None:
                        node = function_named(func.value, info, self.facts)
                        if node is not None:
                            break
            else:
                node = structure.module_functions.get(func.value)
            if node is None:
                return None
            info = structure.functions.get(node)
            return info if info is not None and self._still_means(info, func.value, scopes) else None
        if isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls"):
            for scope in scopes.scopes:
                if isinstance(scope, cst.FunctionDef):
                    info = structure.functions.get(scope)
                    if info is not None and info.cls is not None:
                        node = info.cls.find_method(func.attr.value)
                        return structure.functions.get(node) if node is not None else None
        return None

    def _still_means(self, function: FunctionInfo, name: str, site: Site) -> bool:
        """``name`` used at ``site`` still means the ``def`` of ``function``: no scope between
        the use and the def binds the name at all (a parameter, an assignment in any branch: the
        name is that scope's local, as Python makes it), and in the def's own scope the binding
        that reaches the use is a ``def``, not a statement that surely rebinds the name
        (``resize = wrap(resize)``: later calls run what ``wrap`` returned). In the def's scope
        that is the last binding before the use; in a nested function, the last one before that
        function is defined."""
        home = function.parent.node if function.parent is not None else None
        for scope in site.scopes:
            if scope is home:
                break
            if (scope, name) in self.bound_here:
                return False
        rebinds = self._rebind_orders.get((home, name))
        if not rebinds:
            return True
        events = [(order, True) for order in self._def_orders.get((home, name), [])] + [(order, False) for order in rebinds]
        scopes = list(site.scopes)
        index = next((i for i, scope in enumerate(scopes) if scope is home), None)
        if index == 0:
            at = site.order
        elif index is not None:
            # a nested function: what the name holds where that function is defined (a later
            # rebinding may come after its calls, so it is not taken as what the calls see)
            at = self.order.get(id(scopes[index - 1]), -1)
        else:
            at = -1
        if at >= 0:
            before = [event for event in events if event[0] < at]
            if before:
                return max(before)[1]
            return True
        return max(events)[1]

    def is_custom_op_call(self, call: cst.Call, scopes: Site) -> bool:
        """A call of a custom op's wrapper: ``ops.ring_conv(x)`` where ``ops =
        tf.load_op_library(path)`` (also ``tf.load_op_library(path).ring_conv(x)``, and a name
        bound to ``ops.ring_conv``). The wrappers of a loaded library build their op in the
        default graph, as ``tf.*`` ops do."""
        func = call.func
        if isinstance(func, cst.Name):
            bound = self._lookup(func.value, scopes) if self.facts.imports.resolve(func) is None else None
            return bool(bound) and all(
                b.value is not None and not b.element and isinstance(b.value, cst.Attribute)
                and self._is_op_library(b.value.value, b.scopes, 0)
                for b in bound  # type: ignore[union-attr]
            )
        return isinstance(func, cst.Attribute) and self._is_op_library(func.value, scopes, 0)

    def _is_op_library(self, expr: cst.BaseExpression, scopes: Site, depth: int) -> bool:
        """``tf.load_op_library(path)``, or a name every binding of which is one."""
        if isinstance(expr, cst.Call):
            return tf_api(self.facts.imports.resolve(expr.func)) == "load_op_library"
        name = dotted_name(expr)
        if name is None or depth > 4 or self.facts.imports.resolve(expr) is not None:
            return False
        bound = self._lookup(name, scopes)
        return bool(bound) and all(
            b.value is not None and not b.element and self._is_op_library(b.value, b.scopes, depth + 1) for b in bound  # type: ignore[union-attr]
        )

    def is_optimizer_call(self, call: cst.Call, scopes: Site) -> bool:
        """A method of a Keras model's optimizer called with graph tensors (``model.optimizer.
        get_gradients(model.total_loss, weights)``): on the graph backend, it builds the gradient
        and update ops of what it is given."""
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Attribute) or func.value.attr.value != "optimizer":
            return False
        if not any(self.graph_kind(a.value, scopes) is not None for a in call.args):
            return False
        return self._is_keras_object(func.value.value, scopes)

    def returns_kind(self, function: FunctionInfo) -> str | None:
        """What a local function returns, as :meth:`graph_kind` says (``return loss, train_op``:
        a collection)."""
        node = function.node
        if node is None:
            return None
        if node in self._returns_memo:
            return self._returns_memo[node]
        self._returns_memo[node] = None
        outer = (node, *self._outer_scopes(function))
        kind: str | None = None
        for n in walk(node.body, into=not_into_scopes):
            if isinstance(n, cst.Return) and n.value is not None:
                found = self.graph_kind(n.value, Site(outer, self.order.get(id(n), -1)))
                if found is not None and (kind is None or found == COLLECTION):
                    kind = found
        self._returns_memo[node] = kind
        return kind

    @staticmethod
    def _outer_scopes(function: FunctionInfo) -> tuple[object, ...]:
        keys: list[object] = []
        parent = function.parent
        while parent is not None:
            keys.append(parent.node)
            parent = parent.parent
        keys.append(None)
        return tuple(keys)

    # --- running the graph ----------------------------------------------------------------------
    def runs_graph(self, call: cst.Call, place: Place) -> bool:
        """``sess.run(...)``, ``tensor.eval(...)``, ``op.run()``, ``K.get_value(v)``, a call of a
        ``K.function``, a Keras model's ``fit`` / ``predict`` on the graph backend."""
        func = call.func
        qualified = self.facts.imports.resolve(func)
        backend = keras_backend_api(qualified)
        if backend is not None:
            return backend in _KERAS_BACKEND_RUNS
        if qualified is not None:
            return False
        scopes = self.scopes_of(place)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            if method in ("run", "eval"):
                if dotted_name(receiver) in ("self", "cls"):
                    return False
                if self._local_function(func, scopes) is not None:
                    return False
                if method == "run" and (call.args or self.is_graph_value(receiver, scopes)):
                    return not self._is_module_object(receiver)
                if method == "eval" and (
                    any(a.keyword is not None and a.keyword.value in ("feed_dict", "session") for a in call.args)
                    or self.is_graph_value(receiver, scopes)
                ):
                    return True
                return False
            if method in _KERAS_RUN_METHODS:
                models = keras_models(self.facts)
                return models.expression(receiver, place) is not None
            return False
        if isinstance(func, cst.Name):
            bound = self._lookup(func.value, scopes)
            return bool(bound) and any(
                b.value is not None and isinstance(b.value, cst.Call)
                and (keras_backend_api(self.facts.imports.resolve(b.value.func)) == "function"
                     or (isinstance(b.value.func, cst.Attribute) and b.value.func.attr.value == "make_callable"))
                for b in bound
            )
        return False

    def _is_module_object(self, receiver: cst.BaseExpression) -> bool:
        qualified = self.facts.imports.resolve(receiver)
        return qualified is not None and qualified.split(".", 1)[0] in _NOT_SESSION_RUN_ROOTS

    # --- which local function a call runs ---------------------------------------------------------
    def callee(self, call: cst.Call, place: Place) -> FunctionInfo | None:
        """The local function ``call`` runs: ``helper(...)``, ``self.method(...)``, or
        ``obj.method(...)`` where ``obj`` is an instance of a local class (bound to
        ``Class(...)`` here, or passed as such by every caller that passes anything)."""
        scopes = self.scopes_of(place)
        found = self._local_function(call.func, scopes)
        if found is not None:
            return found
        func = call.func
        if isinstance(func, cst.Attribute):
            cls = self.instance_class(func.value, place)
            if cls is not None:
                node = cls.find_method(func.attr.value)
                if node is not None:
                    return self.facts.structure.functions.get(node)
        return None

    def instance_class(self, expr: cst.BaseExpression, place: Place) -> ClassInfo | None:
        """The local class ``expr`` (at ``place``) is an instance of, when the file shows it."""
        return self._instance_class(expr, self.scopes_of(place), 0)

    def _instance_class(self, expr: cst.BaseExpression, scopes: Site, depth: int) -> ClassInfo | None:
        if depth > 4:
            return None
        key = (id(expr), depth)
        if key in self._class_memo:
            return self._class_memo[key]
        self._class_memo[key] = None
        found = self._find_instance_class(expr, scopes, depth)
        self._class_memo[key] = found
        return found

    def _find_instance_class(self, expr: cst.BaseExpression, scopes: Site, depth: int) -> ClassInfo | None:
        structure = self.facts.structure
        if isinstance(expr, cst.Call):
            return structure.classes_by_name.get(expr.func.value) if isinstance(expr.func, cst.Name) else None
        name = dotted_name(expr)
        if name is None:
            return None
        bound = self._lookup(name, scopes)
        if bound:
            classes: list[ClassInfo] = []
            for b in bound:
                if b.value is None or b.element:
                    return None
                cls = self._instance_class(b.value, b.scopes, depth + 1)
                if cls is None:
                    return None
                if cls not in classes:
                    classes.append(cls)
            return classes[0] if len(classes) == 1 else None
        if bound is None and "." not in name:
            return self._parameter_class(name, scopes, depth)
        return None

    def _parameter_class(self, name: str, scopes: Site, depth: int) -> ClassInfo | None:
        """A parameter's class, from what the callers of its function pass."""
        innermost = scopes.scopes[0]
        function = self.facts.structure.functions.get(innermost) if isinstance(innermost, cst.FunctionDef) else None
        if function is None or name not in function.params:
            return None
        position = function.params.index(name) - (1 if function.is_method else 0)
        found: ClassInfo | None = None
        passed_somewhere = False
        for site in self.call_sites(function):
            passed = call_argument(site.node, position, name)  # type: ignore[arg-type]
            if passed is None:
                continue
            passed_somewhere = True
            cls = self._instance_class(passed, self.scopes_of(site), depth + 1)
            if cls is None or (found is not None and cls is not found):
                return None
            found = cls
        if found is None and not passed_somewhere and not function.is_method:
            return self._class_by_use(function, name)
        return found

    def _class_by_use(self, function: FunctionInfo, name: str) -> ClassInfo | None:
        """The class of a parameter that no call in the file passes (``def worker(env, model):``,
        run from elsewhere), from what ``function`` does with it: the one local class that has
        every attribute the function reads on it (``model.load_params(p)``, ``model.graph``),
        methods among them. A name no local class (or more than one) has all of, or a parameter
        the function rebinds or annotates, gives none."""
        node = function.node
        if node is None or (node, name) in self.bindings:
            return None
        param = next((p for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params) if p.name.value == name), None)
        if param is None or param.annotation is not None:
            return None
        read: set[str] = set()
        written: set[int] = set()
        for n in walk(node.body, into=not_into_scopes):
            if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del)):
                written.update(id(t) for t in walk(n.target))  # type: ignore[union-attr]
            elif isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == name and id(n) not in written:
                read.add(n.attr.value)
        if not read:
            return None
        matching = [
            cls for cls in self.facts.structure.classes.values()
            if any(cls.find_method(attr) is not None for attr in read) and read <= _class_attributes(cls)
        ]
        return matching[0] if len(matching) == 1 else None

    @cached_property
    def _sites(self) -> dict[FunctionInfo, list[Place]]:
        """Call sites of local functions, found by name and checked by resolution."""
        by_name: dict[str, list[FunctionInfo]] = {}
        for info in self.facts.structure.functions.values():
            by_name.setdefault(info.name, []).append(info)
        sites: dict[FunctionInfo, list[Place]] = {}
        for place in self.calls:
            call = place.node
            assert isinstance(call, cst.Call)
            name = callee_name(call.func)
            if name is None or name not in by_name:
                continue
            resolved = self._local_function(call.func, self.scopes_of(place))
            if resolved is not None:
                sites.setdefault(resolved, []).append(place)
        return sites

    def call_sites(self, function: FunctionInfo) -> list[Place]:
        """Where ``function`` is called by name or as ``self.method`` (not through objects)."""
        return self._sites.get(function, [])

    @cached_property
    def resolved_calls(self) -> list[tuple[Place, FunctionInfo]]:
        """Every call of a local function, with its place: ``helper(...)``, ``self.m(...)``,
        ``obj.m(...)`` on an instance of a local class, and ``Class(...)`` (its ``__init__``)."""
        structure = self.facts.structure
        by_name = {info.name for info in structure.functions.values()}
        found = []
        for place in self.calls:
            call = place.node
            assert isinstance(call, cst.Call)
            name = callee_name(call.func)
            if name is None:
                continue
            callee = self.callee(call, place) if name in by_name else None
            if callee is None and isinstance(call.func, cst.Name) and name in structure.classes_by_name:
                init = structure.classes_by_name[name].find_method("__init__")
                callee = structure.functions.get(init) if init is not None else None
            if callee is None and self.facts.imports.resolve(call.func) is None:
                callee = self._called_instance_method(call, place)
            if callee is not None:
                found.append((place, callee))
        return found

    def _called_instance_method(self, call: cst.Call, place: Place) -> FunctionInfo | None:
        """``model(x, t)`` on an instance of a local class runs its ``__call__``, or for a Keras
        layer or model subclass, its ``call``."""
        if not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        cls = self.instance_class(call.func, place)
        if cls is None:
            return None
        method = cls.find_method("__call__")
        if method is None and any(is_keras_name(base) for base in cls.qualified_bases):
            method = cls.find_method("call")
        return self.facts.structure.functions.get(method) if method is not None else None

    @cached_property
    def callee_of(self) -> dict[int, FunctionInfo]:
        """``id(call)`` -> the local function it runs (see :attr:`resolved_calls`)."""
        return {id(place.node): callee for place, callee in self.resolved_calls}

    @cached_property
    def calls_by_caller(self) -> dict[FunctionInfo, list[tuple[Place, FunctionInfo]]]:
        """The resolved calls each function (the module's top level included) makes."""
        found: dict[FunctionInfo, list[tuple[Place, FunctionInfo]]] = {}
        for place, callee in self.resolved_calls:
            found.setdefault(caller_of(place, self.facts), []).append((place, callee))
        return found

    def sites_of(self, function: FunctionInfo) -> list[Place]:
        """Every resolved call of ``function`` (through objects too)."""
        return [place for place, callee in self.resolved_calls if callee is function]

    @cached_property
    def repeated(self) -> dict[FunctionInfo, tuple[Confidence, str]]:
        """Functions that run again and again: called in a loop, from a function that is, or by
        Keras as a callback hook; with how sure (low when every loop is bounded by a literal of
        at most :data:`FEW_ITERATIONS`) and why, for messages."""
        facts = self.facts
        found: dict[FunctionInfo, tuple[Confidence, str]] = {}
        for info in facts.structure.functions.values():
            if is_keras_callback_hook(facts, info):
                found[info] = (Confidence.MEDIUM, f"called by Keras ('{info.name}' runs every batch or epoch)")
        changed = True
        while changed:
            changed = False
            for caller, calls in self.calls_by_caller.items():
                for place, callee in calls:
                    if callee is caller:
                        continue
                    loops = list(place.loop_nodes)
                    if loops:
                        bounded = few_runs(facts, loops)
                        reason = (Confidence.LOW if bounded else Confidence.MEDIUM, f"called in the loop at line {facts.line_of(loops[-1])}")
                    elif caller in found:
                        reason = (found[caller][0], f"called from '{caller.name}', {found[caller][1]}")
                    else:
                        continue
                    if callee not in found or reason[0].rank > found[callee][0].rank:
                        found[callee] = reason
                        changed = True
        return found


@dataclass(frozen=True)
class _Bound:
    """One binding of a name: the expression it gets (None: unknown); ``element``: an element
    of that expression (a loop target)."""

    value: cst.BaseExpression | None
    #: Where the binding happens (and its expression is evaluated).
    site: Site = Site()
    element: bool = False

    @property
    def scopes(self) -> Site:
        return self.site

    def runs(self, tf: TfGraph) -> bool:
        """Bound to what ``sess.run`` / ``.eval()`` returns: fetched numpy values."""
        value = self.value
        while isinstance(value, cst.Subscript):
            value = value.value
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
            return False
        return value.func.attr.value in ("run", "eval", "numpy") and tf.facts.imports.resolve(value.func) is None


Binding = _Bound


def _class_attributes(cls: ClassInfo) -> set[str]:
    """The attributes a local class shows: its methods and class-level names, the ``self.x`` its
    methods assign, and those of its local bases."""
    found: set[str] = set()
    for statement in cls.node.body.body:
        if isinstance(statement, cst.FunctionDef):
            found.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    found.update(n for t in small.targets for n in bound_names(t.target))
                elif isinstance(small, cst.AnnAssign):
                    found.update(bound_names(small.target))
    for n in walk(cls.node.body):
        targets: list[cst.BaseExpression] = []
        if isinstance(n, cst.AssignTarget):
            targets = [n.target]
        elif isinstance(n, (cst.AnnAssign, cst.AugAssign)):
            targets = [n.target]
        for target in targets:
            found.update(b.split(".")[1] for b in bound_names(target) if b.startswith("self.") and b.count(".") == 1)
    for base in cls.local_bases:
        found |= _class_attributes(base)
    return found


def _runs_unconditionally(place: Place) -> bool:
    """The statement at ``place`` runs whenever its scope's body does: no ``if``, loop, ``try``
    or ``match`` between it and its scope (``with`` blocks are fine)."""
    chain = place.path
    start = next((i for i in range(len(chain) - 1, -1, -1) if chain[i] is place.scope), -1) if place.scope is not None else -1
    return not any(isinstance(node, (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match)) for node in chain[start + 1:])


def _partial_of(value: cst.BaseExpression | None, name: str, imports: ImportMap) -> bool:
    """``functools.partial(name, ...)``: still a call of ``name``."""
    if not isinstance(value, cst.Call) or imports.resolve(value.func) != "functools.partial" or not value.args:
        return False
    first = value.args[0]
    return first.keyword is None and isinstance(first.value, cst.Name) and first.value.value == name


def _mentions_any(nodes: Sequence[cst.CSTNode], names: set[str]) -> bool:
    """One of ``names`` is read somewhere in ``nodes`` (arguments, an f-string, ``prefix + name``)."""
    return any(isinstance(n, cst.Name) and n.value in names for node in nodes for n in walk(node))


def _reaching(bindings: list[_Bound], site: Site) -> list[_Bound]:
    """Of a name's bindings in the scope of its use, those that can reach it: the ones in the
    innermost loop around the use that binds it (re-bound every iteration), else the last one
    before it in source order (``b = tf.Variable(...)`` in one notebook cell does not reach
    ``b[0]`` after ``b = batches.next()`` in a later one)."""
    if len(bindings) < 2 or site.order < 0:
        return bindings
    looped = [b for b in bindings if b.site.loops & site.loops]
    if looped:
        innermost = [b for b in looped if b.site.loops >= site.loops]
        return innermost or looped
    before = [b for b in bindings if 0 <= b.site.order < site.order]
    return [max(before, key=lambda b: b.site.order)] if before else bindings


def tf_graph(facts: ModuleFacts) -> TfGraph:
    """The file's :class:`TfGraph`, built once per file."""
    return facts.derived(TfGraph.of)


def walk_expressions(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes under ``node`` that run with it (nested functions, lambdas and classes left out)."""
    return walk(node, into=not_into_scopes)


# --- training steps ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainingSites:
    """Where TensorFlow code runs a training step: a ``tf.GradientTape`` block or an
    ``optimizer.apply_gradients(...)`` call. ``loops``: ids of the loops (in the step's own
    scope) that run one every iteration; ``functions``: the functions that run one outside any
    loop of their own (each call is one step, not a whole run)."""

    loops: frozenset[int] = frozenset()
    functions: frozenset[FunctionInfo] = frozenset()


def training_sites(facts: ModuleFacts) -> TrainingSites:
    """The file's :class:`TrainingSites`, found once per file."""
    return facts.derived(_training_sites)


def _training_sites(facts: ModuleFacts) -> TrainingSites:
    loops: set[int] = set()
    functions: set[FunctionInfo] = set()
    for place in facts.index.calls_named("GradientTape", "apply_gradients"):
        call = place.node
        assert isinstance(call, cst.Call)
        qualified = facts.imports.resolve(call.func)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "apply_gradients":
            if qualified is not None and tf_api(qualified) is None:
                continue  # a module's function of that name, not an optimizer's method
        elif tf_api(qualified) != "GradientTape" or not isinstance(place.parent, cst.WithItem):
            continue
        loops.update(id(loop) for loop in place.loop_nodes)
        if not place.loops and isinstance(place.scope, cst.FunctionDef):
            info = facts.structure.functions.get(place.scope)
            if info is not None:
                functions.add(info)
    return TrainingSites(frozenset(loops), frozenset(functions))


#: ``tf.function`` under the names TensorFlow exports it as.
TF_FUNCTION = frozenset({"tensorflow.function", "tensorflow.compat.v2.function", "tensorflow.compat.v1.function"})


def is_tf_function(facts: ModuleFacts, expr: cst.BaseExpression) -> bool:
    """``tf.function`` or ``tf.function(...)``, as a decorator or a wrapper."""
    return facts.imports.resolve(expr.func if isinstance(expr, cst.Call) else expr) in TF_FUNCTION


def input_signature(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The ``input_signature`` of ``tf.function(fn, input_signature)`` or
    ``tf.function(..., input_signature=[...])`` (the second parameter of ``tf.function``)."""
    if not isinstance(expr, cst.Call):
        return None
    signature = call_argument(expr, 1, "input_signature")
    return None if isinstance(signature, cst.Name) and signature.value == "None" else signature


def has_input_signature(expr: cst.BaseExpression) -> bool:
    """``tf.function`` given an ``input_signature``: every argument is a tensor of the given
    spec, so one trace serves every call."""
    return input_signature(expr) is not None


def in_tf_function(facts: ModuleFacts, function: FunctionInfo) -> bool:
    """``function`` (or a function around it) is decorated with ``tf.function``: its body is
    traced once, not run per call."""
    current: FunctionInfo | None = function
    while current is not None and current.node is not None:
        if any(is_tf_function(facts, decorator.decorator) for decorator in current.node.decorators):
            return True
        current = current.parent
    return False
