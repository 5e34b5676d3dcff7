"""The provenance pass's environment: names bound to values, with their history.

Two costs used to grow with the number of names in scope, which at a long script's top level is
every name of the module: each statement kept a copy of the whole environment (what rules read as
"the values before this statement"), and every branch and loop iteration copied and compared all
of them. That made the analysis quadratic in file size, in time and in memory.

Here an environment keeps, for each name it bound itself, the history of its bindings as
``(time, value)`` pairs on one clock, and reads every other name from the environment it was
forked from. So:

- a statement's view of the environment (:meth:`Env.view`) is a clock reading, and looking a name
  up in it finds the binding current at that time;
- a branch (:meth:`Env.fork`) starts empty, and its parent is not changed while it runs (the
  interpreter merges a branch back before it goes on with the parent), so a fork costs nothing
  and a chain of forks is only as deep as the code's nesting;
- every environment remembers the names bound or deleted since it was forked (``written``), so a
  merge looks only at those, and writes them into the parent's own history.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from leaklint.analysis.values import Value

#: What a history records for a name deleted (``del x``) or unbound on a path.
_UNBOUND = None
#: One clock for every environment: views compare times across forks.
_clock = itertools.count()


def _lookup(env: Env | None, name: str, time: int | None) -> Value | None:
    """The value bound to ``name`` in ``env`` at ``time`` (None: now), or None if unbound."""
    while env is not None:
        history = env._histories.get(name)
        if history is not None and (time is None or history[0][0] <= time):
            if time is None or history[-1][0] <= time:
                return history[-1][1]
            return history[bisect.bisect_right(history, time, key=_time_of) - 1][1]
        env = env._parent
    return None


def _time_of(entry: tuple[int, Optional[Value]]) -> int:
    return entry[0]


class _Bindings(Mapping):
    """The read side shared by an environment and its views: everything follows from ``get``."""

    __slots__ = ()

    def get(self, name: str, default: Value | None = None) -> Value | None:  # type: ignore[override]
        raise NotImplementedError

    def __getitem__(self, name: str) -> Value:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None  # type: ignore[arg-type]

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Env(_Bindings, MutableMapping):
    """A frame's bindings: a mutable mapping of names to values, with their history."""

    __slots__ = ("_histories", "_parent", "written")

    def __init__(self, values: Mapping[str, Value] | None = None, *, parent: Env | None = None) -> None:
        #: name -> [(time, value or _UNBOUND)], times increasing: the names bound here.
        self._histories: dict[str, list[tuple[int, Optional[Value]]]] = {}
        self._parent = parent
        #: Names bound or deleted since this environment was created or forked.
        self.written: set[str] = set()
        if values:
            now = next(_clock)
            self._histories = {name: [(now, value)] for name, value in values.items()}

    def get(self, name: str, default: Value | None = None) -> Value | None:  # type: ignore[override]
        # _lookup(self, name, None), written out: the interpreter reads names more than anything.
        env: Env | None = self
        while env is not None:
            history = env._histories.get(name)
            if history is not None:
                value = history[-1][1]
                return default if value is None else value
            env = env._parent
        return default

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None  # type: ignore[arg-type]

    def __setitem__(self, name: str, value: Value) -> None:
        self._record(name, value)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._record(name, _UNBOUND)

    def pop(self, name: str, default: object = None) -> object:  # type: ignore[override]
        value = self.get(name)
        if value is None:
            return default
        self._record(name, _UNBOUND)
        return value

    def __iter__(self) -> Iterator[str]:
        names: dict[str, None] = {}
        env: Env | None = self
        while env is not None:
            names.update(dict.fromkeys(env._histories))
            env = env._parent
        return (name for name in names if self.get(name) is not None)

    def _record(self, name: str, value: Value | None) -> None:
        entry = (next(_clock), value)
        history = self._histories.get(name)
        if history is None:
            self._histories[name] = [entry]
        else:
            history.append(entry)
        self.written.add(name)

    def fork(self) -> Env:
        """An environment for a branch: it reads this one and writes only its own bindings.
        This one must not change while the branch is in use (merge the branch back first)."""
        return Env(parent=self)

    def view(self) -> EnvView:
        """The bindings as they are now, unchanged by later writes: what a statement sees."""
        return EnvView(self, next(_clock))


class EnvView(_Bindings):
    """An environment at one time (see :meth:`Env.view`)."""

    __slots__ = ("_env", "_time")

    def __init__(self, env: Env, time: int) -> None:
        self._env = env
        self._time = time

    def get(self, name: str, default: Value | None = None) -> Value | None:  # type: ignore[override]
        value = _lookup(self._env, name, self._time)
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._env if self.get(name) is not None)
