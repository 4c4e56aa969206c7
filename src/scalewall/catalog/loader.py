"""Strict TOML loaders: an unknown or missing key is an error naming the file and the key."""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
import types
import typing
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from scalewall.catalog.schema import (
    Accelerator,
    ClusterSpec,
    Fabric,
    Link,
    ModelSpec,
    Stack,
    System,
)
from scalewall.errors import ScalewallError, SpecError

T = TypeVar("T")

KINDS: dict[str, type[Any]] = {
    "accelerators": Accelerator,
    "systems": System,
    "links": Link,
    "fabrics": Fabric,
    "clusters": ClusterSpec,
    "models": ModelSpec,
    "stacks": Stack,
}


def _coerce(name: str, value: Any, hint: Any, where: str) -> Any:
    """Check a TOML/JSON value against a field's type hint: ints are accepted for floats
    (non-finite floats are not), lists for tuples."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for arm in typing.get_args(hint):
            try:
                return _coerce(name, value, arm, where)
            except SpecError:
                continue
        raise SpecError(name, value, f"expected {hint}", where=where)
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise SpecError(name, value, "must be a finite number", where=where)
        return float(value)
    if hint is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if hint is bool and isinstance(value, bool):
        return value
    if hint is str and isinstance(value, str):
        return value
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(hint)
        return [_coerce(name, v, item, where) for v in value]
    if origin is tuple and isinstance(value, list | tuple):
        item = typing.get_args(hint)[0]
        return tuple(_coerce(name, v, item, where) for v in value)
    if origin is dict and isinstance(value, dict):
        _, item = typing.get_args(hint)
        return {str(k): _coerce(f"{name}.{k}", v, item, where) for k, v in value.items()}
    if hint is type(None) and value is None:
        return None
    raise SpecError(name, value, f"expected {getattr(hint, '__name__', hint)}", where=where)


_TYPE_HINTS: dict[type[Any], dict[str, Any]] = {}
"""Each dataclass's resolved field types: resolving them costs more than building one entry."""


def _type_hints(cls: type[Any]) -> dict[str, Any]:
    if cls not in _TYPE_HINTS:
        _TYPE_HINTS[cls] = typing.get_type_hints(cls)
    return _TYPE_HINTS[cls]


def build(cls: type[T], data: Mapping[str, Any], where: str) -> T:
    """Build dataclass ``cls`` from a mapping, rejecting unknown and missing keys."""
    hints = _type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in data:
        if key not in fields:
            valid = ", ".join(sorted(fields))
            raise SpecError(key, data[key], f"unknown key; valid keys: {valid}", where=where)
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _coerce(name, data[name], hints[name], where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise SpecError(name, None, "required key is missing", where=where)
    return cls(**kwargs)


def load_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file; a syntax error names the file."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ScalewallError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ScalewallError(f"{path}: not valid TOML: not UTF-8 text") from None
    except OSError as exc:
        raise ScalewallError(f"{path}: cannot read: {exc.strerror}") from None


def load_entry(path: Path, cls: type[T]) -> T:
    """Load one catalog entry file of dataclass ``cls``."""
    return build(cls, load_toml(path), where=str(path))


@cache
def _data_root() -> Path:
    # Resolved once: importlib.resources costs a quarter of a millisecond per call, and every
    # entry named by its id asks for the directory.
    return Path(str(resources.files("scalewall.catalog") / "data"))


def _entry_files(kind: str) -> Iterator[Path]:
    yield from sorted((_data_root() / kind).glob("*.toml"))


_FILE_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
"""What an entry id that is also its file's name looks like (no path separators)."""


@cache
def _read_entry(kind: str, stem: str) -> Any:
    """The entry in the built-in file ``<kind>/<stem>.toml``, whose id must be ``stem``."""
    path = _data_root() / kind / f"{stem}.toml"
    entry = load_entry(path, KINDS[kind])
    if entry.id != stem:
        raise SpecError("id", entry.id, f"must equal the file name {stem!r}", where=str(path))
    return entry


def find_by_file(kind: str, entry_id: str) -> Any | None:
    """The entry whose file is named ``entry_id``, or None if there is no such file. One file
    is read, so a command that names its entries by id does not parse the whole catalog."""
    if not _has_file(kind, entry_id):
        return None
    return _read_entry(kind, entry_id)


@cache
def _has_file(kind: str, entry_id: str) -> bool:
    """Whether the built-in data has a file for this entry (package data: asked once)."""
    if kind not in KINDS or not _FILE_ID.fullmatch(entry_id):
        return False
    return (_data_root() / kind / f"{entry_id}.toml").is_file()


@cache
def entries(kind: str) -> dict[str, Any]:
    """All built-in entries of one kind, by id. Ids must match their file names."""
    if kind not in KINDS:
        raise SpecError("kind", kind, f"valid kinds: {', '.join(KINDS)}")
    return {path.stem: _read_entry(kind, path.stem) for path in _entry_files(kind)}


def lookup(kind: str, entry_id: str) -> Any:
    """One built-in entry by id; an unknown id lists the valid ones. An id that is a file
    name reads that file only; anything else falls back to the full table."""
    entry = find_by_file(kind, entry_id)
    if entry is not None:
        return entry
    table = entries(kind)
    if entry_id not in table:
        singular = kind.rstrip("s")
        raise SpecError(singular, entry_id, f"valid: {', '.join(sorted(table))}")
    return table[entry_id]


def accelerators() -> dict[str, Accelerator]:
    return entries("accelerators")


def systems() -> dict[str, System]:
    return entries("systems")


def links() -> dict[str, Link]:
    return entries("links")


def fabrics() -> dict[str, Fabric]:
    return entries("fabrics")


def models() -> dict[str, ModelSpec]:
    return entries("models")


def stacks() -> dict[str, Stack]:
    return entries("stacks")


def normal_name(name: str) -> str:
    """A name as looked up: lower case, runs of spaces and underscores as one hyphen."""
    return "-".join(str(name).strip().lower().replace("_", " ").split())


@cache
def _accelerator_names() -> dict[str, str]:
    out: dict[str, str] = {}
    for entry_id, entry in accelerators().items():
        for name in (entry_id, *entry.aliases):
            key = normal_name(name)
            if out.get(key, entry_id) != entry_id:
                raise SpecError("aliases", name, f"names both {out[key]!r} and {entry_id!r}")
            out[key] = entry_id
    return out


NAME_NOISE = frozenset(
    {
        "nvidia", "amd", "tesla", "huawei", "instinct", "gpu", "gpus", "accelerator",
        "superchip", "hbm3", "hbm3e", "nvl72", "nvl36", "nvl4", "dgx", "hgx", "tensor",
        "core",
    }
)  # fmt: skip
"""Words a user's or a source's accelerator name carries beside the part's own name: vendor
and family names, the memory technology where the catalog tells parts apart by capacity
instead (``hbm2e`` is kept: it names the 96 GB H100), NVIDIA's product line (``A100 Tensor
Core GPU``), the rack an NVL72 part sits in and the
server it is named by (``DGX B200``, ``HGX H100``). A form factor that changes the part
(``pcie``, ``nvl`` for the H100 NVL) is kept."""


def accelerator_id(name: str) -> str | None:
    """The catalog id an accelerator id or alias names, or None. An id (in any case) is its
    file's name and reads one file; an alias needs the whole table. A name as sources write it
    (``NVIDIA H100 80GB HBM3``, ``AMD Instinct MI300X``, ``GB200 NVL72``) is read without the
    words of ``NAME_NOISE``."""
    key = normal_name(name)
    if find_by_file("accelerators", key) is not None:
        return key
    names = _accelerator_names()
    if key in names:
        return names[key]
    core = "-".join(w for w in key.split("-") if w not in NAME_NOISE)
    if core and core != key:
        if find_by_file("accelerators", core) is not None:
            return core
        return names.get(core)
    return None


def accelerator(entry_id: str) -> Accelerator:
    canonical = accelerator_id(entry_id)
    result: Accelerator = lookup("accelerators", canonical or entry_id)
    return result


def system(entry_id: str) -> System:
    result: System = lookup("systems", entry_id)
    return result


def system_named(name: str) -> System | None:
    """The catalog system with id ``name`` (as given or normalised), or None."""
    for key in (name, normal_name(name)):
        found: System | None = find_by_file("systems", key) or systems().get(key)
        if found is not None:
            return found
    return None


def link(entry_id: str) -> Link:
    result: Link = lookup("links", entry_id)
    return result


def fabric(entry_id: str) -> Fabric:
    result: Fabric = lookup("fabrics", entry_id)
    return result


def cluster_spec(entry_id: str) -> ClusterSpec:
    result: ClusterSpec = lookup("clusters", entry_id)
    return result


MODEL_NOISE = frozenset({"meta", "hf", "base", "instruct", "chat"})
"""Words a model's name as written carries beside its identity: the publisher's prefix of Meta's
repositories (``Meta-Llama-3-70B``), Hugging Face's ``-hf`` conversions and the base, instruct
and chat variants, which share the architecture (and so the training cost)."""
_VERSION = re.compile(r"^v\d+(\.\d+)*$")
_SIZE = re.compile(r"^\d+(\.\d+)?[bmt]$")


_EXPERTS = re.compile(r"^\d+e$")
"""An expert-count tag (``16E`` in ``Llama-4-Scout-17B-16E``), which Meta's MoE repositories
write after the active size; the pair adds nothing to the family and variant names."""


def _model_key(name: str) -> str:
    """A model name compared without case, separators or an organisation prefix:
    ``meta-llama/Llama-3.1-405B`` and ``llama3.1-405b`` give the same key; an active size
    followed by an expert count (``17B-16E``) is dropped."""
    words = [w for w in normal_name(_without_org(name)).split("-") if w and w not in MODEL_NOISE]
    for i in range(len(words) - 1, 0, -1):
        if _EXPERTS.match(words[i]) and _SIZE.match(words[i - 1]):
            del words[i - 1 : i + 1]
            break
    return "".join(words)


_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*/(?P<model>[A-Za-z0-9][A-Za-z0-9_.-]*)$")
"""A Hugging Face repository id, ``organisation/model``: one slash, no path steps."""


def _without_org(name: str) -> str:
    """``name`` without the organisation of a Hugging Face repository id; anything else with a
    slash (``../models/x``) is kept whole, so it names no model."""
    text = str(name).strip()
    match = _REPO.match(text)
    return match["model"] if match else text


@cache
def _model_keys() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for entry_id in models():
        out.setdefault(_model_key(entry_id), []).append(entry_id)
    return {k: tuple(v) for k, v in out.items()}


def model_id(name: str) -> str | None:
    """The catalog id a model's name as users and sources write it names, or None: the id
    itself, the same name in another case or spelling (``Llama 3.1 405B``, ``DeepSeek-V3``,
    ``meta-llama/Meta-Llama-3-70B``, ``Mixtral-8x22B-v0.1``), or a family name alone where the
    catalog holds one size of the family (``BLOOM`` is ``bloom-176b``). A name that fits
    several (``Llama 3``) or only part of an id (``DeepSeek``) names none."""
    if find_by_file("models", str(name)) is not None:
        return str(name)
    keys = _model_keys()
    key = _model_key(name)
    unversioned = _model_key(
        "-".join(w for w in normal_name(_without_org(name)).split("-") if not _VERSION.match(w))
    )
    for candidate in (key, unversioned):
        if candidate and len(keys.get(candidate, ())) == 1:
            return keys[candidate][0]
    # A family name alone (``BLOOM``, ``GPT-3``) names the catalog's one size of that family.
    sized = {
        i
        for k, ids in keys.items()
        if key and _SIZE.match(k[len(key) :]) and k.startswith(key)
        for i in ids
    }
    return sized.pop() if len(sized) == 1 else None


def model(entry_id: str) -> ModelSpec:
    canonical = model_id(entry_id)
    result: ModelSpec = lookup("models", canonical or entry_id)
    return result
