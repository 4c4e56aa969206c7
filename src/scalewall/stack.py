"""Software stacks: one resolver from an id, an alias, overrides or an object to a ``Stack``.

The CLI (``--stack ID --stack-set field=value``), the Python API, the validator (a case's
``plan.stack``) and the search and sweep all call ``resolve_stack``, so the default and the
meaning of an id are decided here once. Stacks are catalog data
(``catalog/data/stacks/<id>.toml``), each field cited.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from scalewall import catalog
from scalewall.catalog.loader import build
from scalewall.catalog.schema import STACK_METADATA, Stack
from scalewall.errors import SpecError

DEFAULT_STACK = "megatron-core"
"""The stack a question that names none runs on: Megatron-Core with its overlaps on."""

StackSpec = Stack | str | Mapping[str, Any] | None
"""What names a stack: an object, an id or alias, ``{"preset": id, "overrides": {...}}``, or
None for the default."""


STACK_NOISE = frozenset({"framework"})
"""Words a stack's name as written carries beside the framework's own name (``NeMo Framework
25.09`` is ``nemo-25.09``)."""


def _normal(name: str) -> str:
    """A stack name as looked up: lower case, brackets and commas dropped, runs of spaces and
    underscores as one hyphen, without the words of ``STACK_NOISE``: ``Megatron-LM (2023)`` is
    ``megatron-lm-2023``."""
    text = re.sub(r"[(),]", " ", name.strip().lower().replace("_", " "))
    return "-".join(w for w in text.split() if w not in STACK_NOISE)


@cache
def _index() -> dict[str, str]:
    """Every id and alias (normalised) to its catalog id; an alias used twice is an error."""
    out: dict[str, str] = {}
    for stack_id, entry in catalog.stacks().items():
        for name in (stack_id, *entry.aliases):
            key = _normal(name)
            if key in out and out[key] != stack_id:
                raise SpecError("aliases", name, f"names both {out[key]!r} and {stack_id!r}")
            out[key] = stack_id
    return out


_RELEASE = re.compile(r"^(?P<family>.+?)-?[vr]?(?P<version>\d+\.\d+(?:\.\d+)*|\d{4})$")
"""A name ending in a release: ``nemo-24.12``, ``megatron-core-0.13``, ``megatron-lm-2023``,
``megatron-core-r0.8.0`` (Megatron's ``core_r`` tags), ``torchtitan-v0.2``."""


def _release(key: str) -> tuple[str, tuple[int, ...]] | None:
    match = _RELEASE.match(key)
    if match is None:
        return None
    return match["family"], tuple(int(part) for part in match["version"].split("."))


def release_match(name: str) -> str | None:
    """The catalog stack a release the catalog does not list runs as: of the ids and aliases
    of the same family whose release number has as many leading digits (container years like
    24.07 apart from NeMo 2.0 and from calendar years), the latest one not newer than the
    named release, so a run gets the behaviour of the last release catalogued before it
    (``nemo-24.11`` -> ``nemo-24.09``, ``megatron-core-0.13`` -> ``megatron-core``); a
    family the catalog holds with no release numbers runs as its one entry
    (``torchtitan-0.2`` -> ``torchtitan-fsdp2``). None when the name carries no release or
    nothing catalogued precedes it."""
    wanted = _release(_normal(name))
    if wanted is None:
        return None
    family, version = wanted
    index = _index()
    # A family named by an alias (``mcore-0.9``) is that stack's family.
    families = {family}
    if family in index:
        families.add(_normal(index[family]))
    best: tuple[tuple[int, ...], str] | None = None
    released: set[str] = set()
    same_scheme = False
    for key, stack_id in index.items():
        known = _release(key)
        if known is None or known[0] not in families:
            continue
        released.add(stack_id)
        if len(str(known[1][0])) != len(str(version[0])):
            continue
        same_scheme = True
        if known[1] > version:
            continue
        if best is None or known[1] > best[0]:
            best = (known[1], stack_id)
    if best is None and not released and family in index:
        # The catalog holds this framework without release numbers: every release runs as
        # its one entry (``torchtitan-0.2``, ``deepspeed-0.14``).
        return index[family]
    if best is None and not same_scheme and len(released) == 1:
        # Every catalogued release of the family runs as one entry: a release numbered
        # another way (Megatron-Bridge's package version 0.2 beside its 25.09 containers)
        # runs as it too.
        return released.pop()
    return None if best is None else best[1]


def stack_ids() -> list[str]:
    """The catalog's stack ids."""
    return sorted(catalog.stacks())


def preset(name: str) -> Stack:
    """The catalog stack with this id or alias (case, spaces and underscores ignored), or, for
    a release the catalog does not list, the last one catalogued before it
    (``release_match``). An id reads its one file; an alias needs the whole table."""
    key = _normal(name)
    direct: Stack | None = catalog.find_by_file("stacks", key)
    if direct is not None:
        return direct
    stack_id = _index().get(key) or release_match(key)
    if stack_id is None:
        raise SpecError(
            "stack",
            name,
            f"one of {', '.join(stack_ids())} (or an alias of one, or a later release of one)",
        )
    return catalog.stacks()[stack_id]


def behaviour_fields() -> list[str]:
    """The ``Stack`` fields an override may set (every field but the entry's metadata)."""
    return [f.name for f in dataclasses.fields(Stack) if f.name not in STACK_METADATA]


def parse_assignments(items: Sequence[str]) -> dict[str, Any]:
    """``field=value`` strings (``--stack-set``) to typed values: the field's type decides
    how the text is read (true/false, integers, numbers, words)."""
    hints = typing.get_type_hints(Stack)
    valid = behaviour_fields()
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise SpecError("stack-set", item, "field=value, e.g. tp_comm_overlap_frac=0")
        if name not in valid:
            raise SpecError("stack-set", name, f"a stack field: {', '.join(valid)}")
        out[name] = _typed(name, text.strip(), hints[name])
    return out


def _typed(name: str, text: str, hint: Any) -> Any:
    try:
        if hint is bool:
            if text.lower() not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                raise ValueError
            return text.lower() in ("true", "1", "yes", "on")
        if hint is int:
            return int(text)
        if hint is float:
            return float(text)
    except ValueError:
        kind = {bool: "true or false", int: "an integer", float: "a number"}[hint]
        raise SpecError(name, text, kind) from None
    return text


def with_overrides(stack: Stack, overrides: Mapping[str, Any], where: str = "") -> Stack:
    """``stack`` with some behaviour fields replaced, each checked against its type; the
    result is named ``<id>+overrides`` so no output passes it off as the catalog entry."""
    if not overrides:
        return stack
    valid = set(behaviour_fields())
    for key in overrides:
        if key not in valid:
            raise SpecError(key, overrides[key], f"a stack field: {', '.join(sorted(valid))}")
    data = {f.name: getattr(stack, f.name) for f in dataclasses.fields(Stack)}
    data.update(overrides)
    data["id"] = stack.id if stack.id.endswith("+overrides") else f"{stack.id}+overrides"
    return build(Stack, data, where=where or "stack overrides")


def resolve_stack(
    spec: StackSpec = None,
    overrides: Mapping[str, Any] | Sequence[str] | None = None,
    *,
    where: str = "",
) -> Stack:
    """The stack a question names. ``overrides`` is a mapping or ``field=value`` strings."""
    if isinstance(spec, Stack):
        stack = spec
    elif spec is None:
        stack = preset(DEFAULT_STACK)
    elif isinstance(spec, str):
        stack = preset(spec)
    elif isinstance(spec, Mapping):
        unknown = set(spec) - {"preset", "overrides"}
        if unknown or not isinstance(spec.get("preset"), str):
            raise SpecError(
                "stack", dict(spec), '{"preset": ID, "overrides": {field: value}}', where=where
            )
        inner = spec.get("overrides") or {}
        if not isinstance(inner, Mapping):
            raise SpecError("stack.overrides", inner, "a table of field = value", where=where)
        stack = with_overrides(preset(str(spec["preset"])), inner, where)
    else:
        raise SpecError("stack", spec, "a stack id, a Stack or {preset, overrides}", where=where)
    if overrides:
        if not isinstance(overrides, Mapping):
            overrides = parse_assignments(list(overrides))
        stack = with_overrides(stack, overrides, where)
    return stack


def with_recompute_modules(recompute: Any, stack: Stack, where: str = "") -> tuple[Any, Stack]:
    """A recompute given as Megatron-Core's recompute modules (a list, or a string such as
    ``"layernorm,moe"``: ``plan.recompute_modules_of``) -> ``("selective", the stack with
    their fields set)``; any other value is returned as it is. A stack without Megatron's
    selective recompute refuses them."""
    from scalewall.plan.plan import recompute_module_flags, recompute_modules_of

    modules = recompute_modules_of(recompute)
    if not modules:
        return recompute, stack
    if stack.selective_recompute != "attention":
        raise SpecError(
            "recompute",
            recompute,
            f"none, selective or full: stack {stack.id!r} has no Megatron-Core recompute modules",
            where=where,
        )
    return "selective", with_overrides(stack, recompute_module_flags(modules), where)


__all__ = [
    "DEFAULT_STACK",
    "StackSpec",
    "behaviour_fields",
    "parse_assignments",
    "preset",
    "release_match",
    "resolve_stack",
    "stack_ids",
    "with_overrides",
    "with_recompute_modules",
]
