"""Import the text output of NVIDIA nccl-tests (``all_reduce_perf``, ``all_gather_perf`` ...).

The parser reads the column header (``size count type redop root time algbw busbw #wrong``, then
the same time/algbw/busbw/#wrong group again for the in-place run; older releases lack ``root`` or
``redop`` and print ``error`` instead of ``#wrong``) and turns each result row into two records,
out-of-place and in-place. The collective comes from ``# Collective test starting: <name>`` (newer
releases), else from the file name, else from the caller. The group size is the number of
``#  Rank`` lines; without them it is recovered from the printed busbw/algbw ratio.

algbw is recomputed as ``size / time`` from the row rather than taken from the 2-decimal column,
and busbw from it with the nccl-tests factor (see :mod:`scalewall.probe.busbw`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from scalewall.errors import ScalewallError, SpecError
from scalewall.probe.busbw import bus_bandwidth_factor
from scalewall.probe.measurements import Machine, Measurements, Record, Versions, check_record

US_S = 1e-6
"""nccl-tests prints times in microseconds."""
GB = 1e9
"""nccl-tests prints bandwidths in GB/s with decimal gigabytes."""

#: nccl-tests program names (and file-name spellings) -> measurement kinds.
PROGRAMS: dict[str, str] = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "all_to_all",
    "broadcast_perf": "broadcast",
    "reduce_perf": "reduce",
}
_FILE_HINTS: tuple[tuple[str, str], ...] = (
    ("reduce_scatter", "reduce_scatter"),
    ("reducescatter", "reduce_scatter"),
    ("all_reduce", "all_reduce"),
    ("allreduce", "all_reduce"),
    ("all_gather", "all_gather"),
    ("allgather", "all_gather"),
    ("alltoall", "all_to_all"),
    ("all_to_all", "all_to_all"),
    ("broadcast", "broadcast"),
)
#: nccl-tests data type names -> the dtype names of measurements files.
DTYPES: dict[str, str] = {
    "float": "fp32",
    "half": "fp16",
    "bfloat16": "bf16",
    "double": "fp64",
    "f8e4m3": "fp8_e4m3",
    "f8e5m2": "fp8_e5m2",
}

_PREFIX = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:)?\s*")
_RANK = re.compile(
    r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+"
    r"\[[^\]]*\]\s+(.*?)\s*$"
)
_STARTING = re.compile(r"Collective test starting:\s*(\S+)")
_NCCL_VERSION = re.compile(r"NCCL version ([\d.]+)(?:\+cuda([\d.]+))?")
_NCCL_LIBRARY = re.compile(r"nccl-library=(\d+)")


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Row:
    lineno: int
    kind: str
    size_bytes: int
    dtype: str
    variant: str
    time_s: float
    printed_ratio: float | None
    wrong: int | None


@dataclasses.dataclass(kw_only=True)
class _State:
    name: str
    kind: str | None
    columns: list[str] = dataclasses.field(default_factory=list)
    rows: list[_Row] = dataclasses.field(default_factory=list)
    ranks: dict[int, tuple[str, str]] = dataclasses.field(default_factory=dict)
    nccl: str = ""
    cuda: str = ""


def _nccl_code_version(code: int) -> str:
    """NCCL_VERSION_CODE as text: major*10000+minor*100+patch since 2.9, major*1000+... before."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def _kind_from_name(name: str) -> str | None:
    base = Path(name).name.lower().replace("-", "_")
    for hint, kind in _FILE_HINTS:
        if hint in base:
            return kind
    return None


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _wrong(token: str, column: str) -> int | None:
    # ``#wrong`` is a count; the older ``error`` column is a max error, not a count
    if column != "#wrong" or not token.isdigit():
        return None
    return int(token)


def _row_records(state: _State, tokens: Sequence[str], lineno: int) -> list[_Row]:
    where = f"{state.name}:{lineno}"
    cols = state.columns
    if len(tokens) != len(cols):
        raise SpecError(
            "row", " ".join(tokens), f"expected {len(cols)} columns: {' '.join(cols)}", where=where
        )
    if state.kind is None:
        raise SpecError(
            "kind", None, "cannot tell the collective; pass kind= (all_reduce, ...)", where=where
        )
    size = int(tokens[0])
    dtype = DTYPES.get(tokens[cols.index("type")], tokens[cols.index("type")])
    groups = [i for i, c in enumerate(cols) if c == "time"]
    out: list[_Row] = []
    for variant, start in zip(("out_of_place", "in_place"), groups, strict=False):
        time_us = _number(tokens[start])
        if time_us is None or time_us <= 0 or size <= 0:
            continue  # nccl-tests prints N/A or 0 where a form is not run
        algbw, busbw = _number(tokens[start + 1]), _number(tokens[start + 2])
        ratio = busbw / algbw if algbw and busbw is not None and algbw > 0 else None
        wrong = _wrong(tokens[start + 3], cols[start + 3])
        out.append(
            _Row(
                lineno=lineno,
                kind=state.kind,
                size_bytes=size,
                dtype=dtype,
                variant=variant,
                time_s=time_us * US_S,
                printed_ratio=ratio,
                wrong=wrong,
            )
        )
    return out


def _scan_line(state: _State, line: str, lineno: int) -> None:
    if m := _STARTING.search(line):
        state.kind = PROGRAMS.get(m.group(1), state.kind)
    if m := _NCCL_VERSION.search(line):
        state.nccl, state.cuda = m.group(1), m.group(2) or state.cuda
    elif (m := _NCCL_LIBRARY.search(line)) and not state.nccl:
        state.nccl = _nccl_code_version(int(m.group(1)))
    if m := _RANK.match(line):
        state.ranks[int(m.group(1))] = (m.group(2), m.group(3))
        return
    if line.startswith("#"):
        tokens = line[1:].split()
        if tokens[:1] == ["size"] and "busbw" in tokens and "time" in tokens:
            state.columns = tokens
        return
    tokens = line.split()
    if state.columns and tokens and tokens[0].isdigit():
        state.rows.extend(_row_records(state, tokens, lineno))


def _group_size(state: _State) -> int:
    """Ranks listed in the log; else solve the printed busbw/algbw ratio for n."""
    if state.ranks:
        return len(state.ranks)
    best = max(
        (r for r in state.rows if r.printed_ratio is not None),
        key=lambda r: r.size_bytes,
        default=None,
    )
    if best is None or best.printed_ratio is None or best.kind in ("broadcast", "reduce"):
        raise SpecError(
            "group_size", None, "the log lists no ranks; pass group_size=", where=state.name
        )
    span = 2.0 if best.kind == "all_reduce" else 1.0  # ratio = span*(n-1)/n
    if best.printed_ratio >= span:
        raise SpecError("group_size", None, "cannot infer; pass group_size=", where=state.name)
    return max(1, round(span / (span - best.printed_ratio)))


def _machine(state: _State, group_size: int) -> Machine:
    hosts = list(dict.fromkeys(h for _, (h, _) in sorted(state.ranks.items())))
    per_host = [sum(1 for h, _ in state.ranks.values() if h == host) for host in hosts]
    names = [d for _, (_, d) in sorted(state.ranks.items())]
    return Machine(
        hostname=hosts[0] if hosts else "",
        hostnames=tuple(hosts),
        num_nodes=max(1, len(hosts)),
        world_size=group_size,
        devices_per_node=max(per_host, default=group_size),
        device_type="cuda",
        device_name=names[0] if names else "",
        backend="nccl",
    )


def _to_record(row: _Row, group_size: int, num_nodes: int, where: str) -> Record:
    algbw = row.size_bytes / row.time_s
    record = Record(
        kind=row.kind,
        variant=row.variant,
        dtype=row.dtype,
        time_s=row.time_s,
        size_bytes=row.size_bytes,
        group_size=group_size,
        num_nodes=num_nodes,
        bytes_per_s=algbw,
        busbw_bytes_per_s=algbw * bus_bandwidth_factor(row.kind, group_size),
        wrong=row.wrong,
    )
    return check_record(record, where=where)


def parse_nccl_tests(
    lines: Iterable[str],
    name: str,
    *,
    kind: str | None = None,
    group_size: int | None = None,
    created_utc: str = "",
) -> Measurements:
    """Parse nccl-tests text output into measurements; ``name`` appears in error messages.

    ``kind`` and ``group_size`` override what the log says (needed only for logs stripped of
    their ``# Collective test starting`` and ``#  Rank`` lines).
    """
    if kind is not None and kind not in PROGRAMS.values():
        raise SpecError("kind", kind, f"valid: {', '.join(PROGRAMS.values())}")
    state = _State(name=name, kind=kind or _kind_from_name(name))
    for lineno, raw in enumerate(lines, start=1):
        line = _PREFIX.sub("", raw.rstrip("\n"), count=1)
        if kind is not None and _STARTING.search(line):
            continue  # the caller's kind wins
        _scan_line(state, line, lineno)
    if not state.rows:
        raise SpecError("file", name, "no nccl-tests result rows found (size count type ...)")
    n = group_size if group_size is not None else _group_size(state)
    machine = _machine(state, n)
    nodes = machine.num_nodes if state.ranks else 1
    records = tuple(_to_record(r, n, nodes, f"{name}:{r.lineno}") for r in state.rows)
    return Measurements(
        created_utc=created_utc or _now_utc(),
        source="nccl-tests",
        machine=machine,
        versions=Versions(nccl=state.nccl, cuda=state.cuda),
        records=records,
        notes=(f"imported from nccl-tests output {Path(name).name}",),
    )


def _now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_nccl_tests(
    path: str | Path, *, kind: str | None = None, group_size: int | None = None
) -> Measurements:
    """Read an nccl-tests log file; the date is the file's modification time (logs carry none)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
        mtime = dt.datetime.fromtimestamp(p.stat().st_mtime, dt.UTC)
    except OSError as exc:
        raise ScalewallError(f"{p}: cannot read: {exc.strerror}") from None
    return parse_nccl_tests(
        text.splitlines(),
        str(p),
        kind=kind,
        group_size=group_size,
        created_utc=mtime.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
