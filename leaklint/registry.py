"""Finds the rules: leaklint's own (every ``leaklint.rules.llNNN_*`` module) and third-party packs.

A rule pack registers under the ``leaklint.rules`` entry-point group; an entry point may name a
:class:`~leaklint.rule.Rule` subclass or a module that defines subclasses.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import pkgutil
import re
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Iterable

from leaklint.rule import DOC_SECTIONS, RULE_CODE, Rule

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "leaklint.rules"
_OWN_RULE_MODULE = re.compile(r"^ll\d{3}_\w+$")


class RegistryError(Exception):
    """A rule is malformed (bad code, duplicate, missing docs): a bug in the rule, not the input."""


def _rules_in_module(module: ModuleType) -> list[type[Rule]]:
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Rule)
        and obj is not Rule
        and obj.__module__ == module.__name__
    ]


def _own_rules() -> Iterable[type[Rule]]:
    package = importlib.import_module("leaklint.rules")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if _OWN_RULE_MODULE.match(info.name):
            yield from _rules_in_module(importlib.import_module(f"leaklint.rules.{info.name}"))


def _plugin_entry_points() -> list[EntryPoint]:
    """The ``leaklint.rules`` entry points of the installed distributions, by name."""
    if not _group_may_be_declared(ENTRY_POINT_GROUP):
        return []
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)


def _group_may_be_declared(group: str) -> bool:
    """False only when no distribution on ``sys.path`` declares ``group`` in its
    ``entry_points.txt``. ``importlib.metadata`` drags in about thirty modules (email, zipfile,
    csv...), a tenth of a one-file run's start-up, and nearly every environment has no rule pack:
    a look at the metadata folders settles that first. Anything this look cannot read (a zip or
    egg on the path) counts as a possible declaration, so the full look-up decides."""
    marker = f"[{group}]"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            return True
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(entry or ".", name, "entry_points.txt"), encoding="utf-8", errors="replace") as declared:
                    if marker in declared.read():
                        return True
            except OSError:
                continue
    return False


def _plugin_rules() -> Iterable[type[Rule]]:
    for entry in _plugin_entry_points():
        loaded = entry.load()
        if inspect.isclass(loaded) and issubclass(loaded, Rule):
            yield loaded
        elif inspect.ismodule(loaded):
            yield from _rules_in_module(loaded)
        else:
            raise RegistryError(f"entry point {entry.name!r} names neither a Rule nor a module")


def validate_rule(rule: type[Rule]) -> None:
    """Raise :class:`RegistryError` unless ``rule`` carries everything the tools rely on."""
    for attribute in ("code", "name", "severity", "summary", "help", "docs"):
        if not getattr(rule, attribute, None):
            raise RegistryError(f"{rule.__qualname__} has no {attribute}")
    if not RULE_CODE.match(rule.code):
        raise RegistryError(f"{rule.__qualname__}: bad rule code {rule.code!r}")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name):
        raise RegistryError(f"{rule.code}: name {rule.name!r} is not kebab-case")
    missing = [s for s in DOC_SECTIONS if f"## {s}" not in rule.docs]
    if missing:
        raise RegistryError(f"{rule.code}: docs lack sections {missing}")


@functools.lru_cache(maxsize=None)
def all_rules() -> dict[str, type[Rule]]:
    """Every known rule by code, in code order."""
    found: dict[str, type[Rule]] = {}
    for rule in (*_own_rules(), *_plugin_rules()):
        validate_rule(rule)
        if rule.code in found and found[rule.code] is not rule:
            raise RegistryError(f"two rules claim {rule.code}: {found[rule.code].__qualname__}, {rule.__qualname__}")
        found[rule.code] = rule
    return dict(sorted(found.items()))
