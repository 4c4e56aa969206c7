"""The measurements file: what ``scalewall probe`` writes and ``scalewall calibrate`` reads.

Format ``scalewall-measurements/1`` (documented in ``docs/measurements.md``): JSON Lines in UTF-8.
Line 1 is a header object (format, date, machine, versions, notes); every further non-blank line
is one record object. One object per line keeps appends cheap and lets an error name its line.

The reader is strict: an unknown or missing key, a wrong type, a non-finite number or a value out
of range raises :class:`scalewall.errors.SpecError` naming the file and the line.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from scalewall.catalog.loader import build
from scalewall.errors import ScalewallError, SpecError
from scalewall.probe.busbw import COLLECTIVE_KINDS

FORMAT = "scalewall-measurements/1"

#: Compute kinds and the number of entries of their ``shape``.
COMPUTE_SHAPES: dict[str, int] = {"gemm": 3, "attention": 4}
#: Every record kind, with the ``variant`` values it may carry.
VARIANTS: dict[str, tuple[str, ...]] = {
    "gemm": ("matmul", "scaled_mm"),
    "attention": ("causal_fwd", "causal_fwd_bwd"),
    "hbm": ("copy",),
    **{kind: ("out_of_place", "in_place") for kind in COLLECTIVE_KINDS},
}
SOURCES = ("probe", "nccl-tests")

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Machine:
    """Where the measurements were taken."""

    hostname: str
    """Host name of rank 0 (the process that wrote the file)."""
    hostnames: tuple[str, ...] = ()
    """Distinct host names of all ranks, in rank order of first appearance."""
    num_nodes: int = 1
    """Number of distinct hosts."""
    world_size: int = 1
    """Number of ranks (processes, one device each) that took part."""
    devices_per_node: int = 1
    """Ranks per host (``LOCAL_WORLD_SIZE``), or the devices nccl-tests listed per host."""
    device_type: str = ""
    """``cuda``, ``cpu``, or empty when unknown."""
    device_name: str = ""
    """Device model as the driver names it (``NVIDIA H100 80GB HBM3``) or the CPU model."""
    device_memory_bytes: int = 0
    """Memory of one device; 0 when unknown."""
    backend: str = ""
    """torch.distributed backend used for collectives (``nccl``, ``gloo``), empty if none."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Versions:
    """Software versions; an empty string means unknown."""

    python: str = ""
    torch: str = ""
    cuda: str = ""
    nccl: str = ""
    driver: str = ""
    """GPU kernel driver version (``550.54.15``)."""
    scalewall: str = ""
    platform: str = ""
    """Operating system and architecture (``Linux-6.1-x86_64``)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Record:
    """One measured operation. Units are SI; rates are per device for compute and hbm kinds."""

    kind: str
    """``gemm``, ``attention``, ``hbm`` or a collective (``all_reduce``, ``all_gather`` ...)."""
    variant: str
    """Which form of the operation (see ``VARIANTS``): e.g. ``causal_fwd``, ``in_place``."""
    dtype: str
    """Element type: ``fp32``, ``bf16``, ``fp16``, ``fp8_e4m3``, ``int8`` ..."""
    time_s: float
    """Time of one operation: median over repeats for the probe, nccl-tests' average."""
    shape: tuple[int, ...] = ()
    """gemm ``(M, N, K)``; attention ``(B, H, T, D)``; empty for the other kinds."""
    size_bytes: int = 0
    """hbm: bytes of the copied buffer; collectives: nccl-tests' S (the whole array)."""
    group_size: int = 1
    """Ranks taking part (1 for compute and hbm kinds)."""
    num_nodes: int = 1
    """Distinct hosts the group spans."""
    flop_per_s: float | None = None
    """Compute kinds: achieved rate, ``flop / time_s``."""
    bytes_per_s: float | None = None
    """hbm: bytes read plus written per second; collectives: algbw ``size_bytes / time_s``."""
    busbw_bytes_per_s: float | None = None
    """Collectives: nccl-tests bus bandwidth ``algbw * factor(kind, group_size)``."""
    time_min_s: float | None = None
    """Fastest repeat, when known."""
    time_max_s: float | None = None
    """Slowest repeat, when known."""
    num_iters: int = 0
    """Timed iterations behind ``time_s`` (0 when unknown)."""
    rank: int | None = None
    """Rank that measured a compute or hbm kind; None for collectives (slowest rank counts)."""
    wrong: int | None = None
    """nccl-tests ``#wrong`` count; None when not checked."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Measurements:
    """A measurements file in memory: header plus records."""

    created_utc: str
    """ISO 8601 date and time the measurement started, UTC (``2025-01-31T12:00:00Z``)."""
    source: str
    """``probe`` or ``nccl-tests``."""
    machine: Machine
    versions: Versions
    records: tuple[Record, ...] = ()
    command: str = ""
    """The command line that produced the measurements, when known."""
    notes: tuple[str, ...] = ()
    """Free-text remarks, e.g. which parts were skipped and why."""
    format: str = FORMAT

    def of_kind(self, kind: str) -> tuple[Record, ...]:
        """The records of one kind, in file order."""
        return tuple(r for r in self.records if r.kind == kind)

    def to_frame(self) -> pd.DataFrame:
        """The records as a pandas DataFrame, one row per record, columns as in ``Record``."""
        import pandas as pd

        rows = [dataclasses.asdict(r) for r in self.records]
        columns = [f.name for f in dataclasses.fields(Record)]
        return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------- strict building from JSON


def _build(cls: type[T], data: Any, where: str) -> T:
    """Build dataclass ``cls`` from a JSON object with the catalog's strict builder (unknown and
    missing keys rejected, ints for floats, lists for tuples, non-finite floats refused)."""
    if not isinstance(data, Mapping):
        raise SpecError(cls.__name__.lower(), data, "expected a JSON object", where=where)
    return build(cls, data, where)


# ---------------------------------------------------------------- semantic checks


def _positive(record: Record, name: str, where: str) -> None:
    value = getattr(record, name)
    if value is None or value <= 0:
        raise SpecError(name, value, f"must be > 0 for kind {record.kind!r}", where=where)


def _check_collective(record: Record, where: str) -> None:
    _positive(record, "size_bytes", where)
    for name in ("bytes_per_s", "busbw_bytes_per_s"):
        value = getattr(record, name)
        if value is None or value < 0:
            raise SpecError(name, value, "must be >= 0 for a collective", where=where)
    if record.num_nodes > record.group_size:
        raise SpecError(
            "num_nodes", record.num_nodes, f"must be <= group_size {record.group_size}", where=where
        )


def check_record(record: Record, where: str = "") -> Record:
    """Check the values of one record beyond their types; return it unchanged."""
    if record.kind not in VARIANTS:
        raise SpecError("kind", record.kind, f"valid kinds: {', '.join(VARIANTS)}", where=where)
    if record.variant not in VARIANTS[record.kind]:
        valid = ", ".join(VARIANTS[record.kind])
        raise SpecError("variant", record.variant, f"valid for {record.kind}: {valid}", where=where)
    _positive(record, "time_s", where)
    for name in ("group_size", "num_nodes"):
        if getattr(record, name) < 1:
            raise SpecError(name, getattr(record, name), "must be at least 1", where=where)
    want = COMPUTE_SHAPES.get(record.kind, 0)
    if len(record.shape) != want or any(d < 1 for d in record.shape):
        valid = f"{want} positive integers" if want else "empty for this kind"
        raise SpecError("shape", list(record.shape), valid, where=where)
    if record.kind in COMPUTE_SHAPES:
        _positive(record, "flop_per_s", where)
    elif record.kind == "hbm":
        _positive(record, "size_bytes", where)
        _positive(record, "bytes_per_s", where)
    else:
        _check_collective(record, where)
    if record.rank is not None and record.rank < 0:
        raise SpecError("rank", record.rank, "must be >= 0 or null", where=where)
    return record


def _check_header(m: Measurements, where: str) -> None:
    if m.format != FORMAT:
        raise SpecError("format", m.format, f"this reader understands {FORMAT!r}", where=where)
    if m.source not in SOURCES:
        raise SpecError("source", m.source, f"valid: {', '.join(SOURCES)}", where=where)
    mach = m.machine
    for name in ("num_nodes", "world_size", "devices_per_node"):
        if getattr(mach, name) < 1:
            raise SpecError(f"machine.{name}", getattr(mach, name), "must be >= 1", where=where)


# ---------------------------------------------------------------- reading and writing


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not allowed (numbers must be finite)")


def _parse_line(text: str, where: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        snippet = text if len(text) <= 60 else text[:57] + "..."
        raise SpecError("line", snippet, f"expected one JSON object ({exc})", where=where) from None


def _header_from(data: Any, where: str) -> Measurements:
    if not isinstance(data, Mapping) or "format" not in data:
        raise SpecError(
            "format", None, f"line 1 must be the header object with format {FORMAT!r}", where=where
        )
    fields = dict(data)
    if fields.get("format") != FORMAT:
        raise SpecError("format", fields.get("format"), f"expected {FORMAT!r}", where=where)
    fields["machine"] = _build(Machine, fields.get("machine"), where)
    fields["versions"] = _build(Versions, fields.get("versions", {}), where)
    if "records" in fields:
        raise SpecError("records", "...", "records go one per line after the header", where=where)
    # machine and versions are already built; build the rest with the strict checker
    header = _build(_HeaderFields, {k: v for k, v in fields.items() if k in _HEADER_KEYS}, where)
    unknown = set(fields) - _HEADER_KEYS - {"machine", "versions"}
    if unknown:
        key = sorted(unknown)[0]
        valid = ", ".join(sorted(_HEADER_KEYS | {"machine", "versions"}))
        raise SpecError(key, fields[key], f"unknown key; valid keys: {valid}", where=where)
    m = Measurements(
        machine=fields["machine"], versions=fields["versions"], **dataclasses.asdict(header)
    )
    _check_header(m, where)
    return m


@dataclasses.dataclass(frozen=True, kw_only=True)
class _HeaderFields:
    format: str
    created_utc: str
    source: str
    command: str = ""
    notes: tuple[str, ...] = ()


_HEADER_KEYS = {f.name for f in dataclasses.fields(_HeaderFields)}


def parse_measurements(lines: Iterable[str], name: str) -> Measurements:
    """Parse the lines of a measurements file; ``name`` is used in error messages."""
    header: Measurements | None = None
    records: list[Record] = []
    for lineno, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        where = f"{name}:{lineno}"
        data = _parse_line(text, where)
        if header is None:
            header = _header_from(data, where)
            continue
        if isinstance(data, Mapping) and "format" in data:
            raise SpecError("format", data["format"], "only line 1 may hold a header", where=where)
        records.append(check_record(_build(Record, data, where), where))
    if header is None:
        raise SpecError("format", None, f"empty file; line 1 must be a {FORMAT} header", where=name)
    return dataclasses.replace(header, records=tuple(records))


def read_measurements(path: str | Path) -> Measurements:
    """Read and validate a measurements file; a defect raises SpecError naming file and line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScalewallError(f"{p}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ScalewallError(f"{p}: not UTF-8 text; expected a {FORMAT} file") from None
    return parse_measurements(text.splitlines(), str(p))


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"non-finite number {value} cannot be written")
    return value


def measurements_lines(m: Measurements) -> list[str]:
    """The file as text lines (header first), without trailing newlines."""
    header = {
        "format": m.format,
        "created_utc": m.created_utc,
        "source": m.source,
        "command": m.command,
        "machine": {k: _plain(v) for k, v in dataclasses.asdict(m.machine).items()},
        "versions": dataclasses.asdict(m.versions),
        "notes": list(m.notes),
    }
    lines = [json.dumps(header, allow_nan=False)]
    for r in m.records:
        row = {k: _plain(v) for k, v in dataclasses.asdict(r).items()}
        lines.append(json.dumps(row, allow_nan=False))
    return lines


def write_measurements(m: Measurements, path: str | Path) -> Path:
    """Write ``m`` as a measurements file (JSON Lines); return the path."""
    for i, record in enumerate(m.records, start=2):
        check_record(record, where=f"record for line {i}")
    p = Path(path)
    try:
        p.write_text("\n".join(measurements_lines(m)) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ScalewallError(f"{p}: cannot write: {exc.strerror}") from None
    return p


def merge_measurements(parts: Iterable[Measurements]) -> Measurements:
    """One file from several runs on the same cluster (e.g. one nccl-tests log per collective).

    The header is the first part's, with the widest machine (most ranks) and every host; records
    and notes are concatenated in order.
    """
    items = list(parts)
    if not items:
        raise SpecError("files", [], "give at least one measurements file or log")
    widest = max(items, key=lambda m: m.machine.world_size).machine
    hosts = tuple(dict.fromkeys(h for m in items for h in m.machine.hostnames))
    machine = dataclasses.replace(
        widest, hostnames=hosts or widest.hostnames, num_nodes=max(len(hosts), widest.num_nodes)
    )
    return dataclasses.replace(
        items[0],
        machine=machine,
        records=tuple(r for m in items for r in m.records),
        notes=tuple(n for m in items for n in m.notes),
    )
