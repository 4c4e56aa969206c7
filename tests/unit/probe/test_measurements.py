"""The measurements file: round trip, and one clear error naming file and line per defect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalewall.errors import ScalewallError, SpecError
from scalewall.probe import (
    FORMAT,
    Machine,
    Measurements,
    Record,
    Versions,
    load_measurements,
    merge_measurements,
    read_measurements,
    write_measurements,
)
from scalewall.probe.measurements import check_record, parse_measurements


def _sample(records: tuple[Record, ...]) -> Measurements:
    return Measurements(
        created_utc="2025-01-31T12:00:00Z",
        source="probe",
        machine=Machine(hostname="n0", hostnames=("n0",), device_type="cpu", device_name="cpu"),
        versions=Versions(python="3.11.7", torch="2.13.0"),
        records=records,
        notes=("a note",),
    )


GEMM = Record(
    kind="gemm",
    variant="matmul",
    dtype="bf16",
    time_s=1e-3,
    shape=(4096, 4096, 4096),
    flop_per_s=2 * 4096**3 / 1e-3,
    rank=0,
    num_iters=10,
)
ALL_REDUCE = Record(
    kind="all_reduce",
    variant="in_place",
    dtype="fp32",
    time_s=2e-3,
    size_bytes=2**28,
    group_size=8,
    num_nodes=1,
    bytes_per_s=2**28 / 2e-3,
    busbw_bytes_per_s=1.75 * 2**28 / 2e-3,
)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_round_trip(tmp_path: Path) -> None:
    m = _sample((GEMM, ALL_REDUCE))
    path = write_measurements(m, tmp_path / "m.jsonl")
    assert read_measurements(path) == m
    lines = _lines(path)
    assert json.loads(lines[0])["format"] == FORMAT == "scalewall-measurements/1"
    assert len(lines) == 3  # header + one line per record


def test_committed_probe_sample_reads(data_dir: Path) -> None:
    m = read_measurements(data_dir / "probe_cpu_gloo_2ranks.jsonl")
    assert m.machine.world_size == 2 and m.machine.backend == "gloo"
    kinds = {r.kind for r in m.records}
    assert {"gemm", "attention", "hbm", "all_reduce", "all_gather"} <= kinds
    frame = m.to_frame()
    assert len(frame) == len(m.records)
    assert set(frame["kind"]) == kinds


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _good_lines(tmp_path: Path) -> list[str]:
    return _lines(write_measurements(_sample((GEMM, ALL_REDUCE)), tmp_path / "good.jsonl"))


def _error(path: Path) -> str:
    with pytest.raises(SpecError) as info:
        read_measurements(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    lines = _good_lines(tmp_path)
    lines[2] = lines[2][:-5]
    assert f"{tmp_path / 'bad.jsonl'}:3:" in _error(_write(tmp_path, lines))


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("time_s", -1.0, "time_s"),
        ("kind", "allreduce", "kind"),
        ("variant", "fused", "variant"),
        ("shape", [1, 2], "shape"),
        ("flop_per_s", None, "flop_per_s"),
        ("rank", "zero", "rank"),
        ("speed", 3, "unknown key"),
        ("num_iters", True, "num_iters"),
    ],
)
def test_bad_record_value(tmp_path: Path, key: str, value: object, needle: str) -> None:
    lines = _good_lines(tmp_path)
    row = json.loads(lines[1])
    row[key] = value
    lines[1] = json.dumps(row)
    message = _error(_write(tmp_path, lines))
    assert ":2:" in message and needle in message


def test_nan_is_rejected(tmp_path: Path) -> None:
    lines = _good_lines(tmp_path)
    lines[2] = lines[2].replace('"time_s": 0.002', '"time_s": NaN')
    assert ":3:" in _error(_write(tmp_path, lines))


def test_missing_key_and_header_problems(tmp_path: Path) -> None:
    lines = _good_lines(tmp_path)
    row = json.loads(lines[1])
    del row["dtype"]
    assert "dtype" in _error(_write(tmp_path, [lines[0], json.dumps(row)]))
    assert ":1:" in _error(_write(tmp_path, lines[1:]))  # no header
    header = json.loads(lines[0])
    header["format"] = "scalewall-measurements/2"
    assert "format" in _error(_write(tmp_path, [json.dumps(header), *lines[1:]]))
    assert ":3:" in _error(_write(tmp_path, [lines[0], lines[1], lines[0]]))  # second header
    assert "empty" in _error(_write(tmp_path, [""]))


def test_unreadable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScalewallError, match="cannot read"):
        read_measurements(tmp_path / "absent.jsonl")


def test_load_tells_formats_apart(data_dir: Path) -> None:
    assert load_measurements(data_dir / "probe_cpu_gloo_2ranks.jsonl").source == "probe"
    assert load_measurements(data_dir / "all_reduce_perf_8xh100.txt").source == "nccl-tests"


def test_merge_keeps_every_record_and_host() -> None:
    a = _sample((GEMM,))
    b = _sample((ALL_REDUCE,))
    wide = Machine(hostname="n1", hostnames=("n1", "n2"), num_nodes=2, world_size=16)
    merged = merge_measurements([a, Measurements(**{**b.__dict__, "machine": wide})])
    assert merged.records == (GEMM, ALL_REDUCE)
    assert merged.machine.world_size == 16
    assert merged.machine.hostnames == ("n0", "n1", "n2")


positive = st.floats(min_value=1e-9, max_value=1e18, allow_nan=False, allow_infinity=False)


@st.composite
def records(draw: st.DrawFn) -> Record:
    kind = draw(st.sampled_from(["gemm", "attention", "hbm", "all_reduce", "all_to_all"]))
    time_s = draw(positive)
    if kind in ("gemm", "attention"):
        dims = 3 if kind == "gemm" else 4
        shape = tuple(draw(st.lists(st.integers(1, 2**20), min_size=dims, max_size=dims)))
        variant = "matmul" if kind == "gemm" else "causal_fwd"
        return Record(
            kind=kind,
            variant=variant,
            dtype="bf16",
            time_s=time_s,
            shape=shape,
            flop_per_s=draw(positive),
            rank=draw(st.integers(0, 10_000)),
        )
    size = draw(st.integers(1, 2**40))
    if kind == "hbm":
        return Record(
            kind="hbm",
            variant="copy",
            dtype="uint8",
            time_s=time_s,
            size_bytes=size,
            bytes_per_s=draw(positive),
        )
    group = draw(st.integers(1, 100_000))
    return Record(
        kind=kind,
        variant="out_of_place",
        dtype="fp32",
        time_s=time_s,
        size_bytes=size,
        group_size=group,
        num_nodes=draw(st.integers(1, group)),
        bytes_per_s=draw(positive),
        busbw_bytes_per_s=draw(positive),
        time_min_s=draw(st.none() | positive),
        wrong=draw(st.none() | st.integers(0, 9)),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(records(), max_size=6))
def test_any_valid_file_round_trips(items: list[Record]) -> None:
    m = _sample(tuple(check_record(r) for r in items))
    from scalewall.probe.measurements import measurements_lines

    assert parse_measurements(measurements_lines(m), "mem") == m


def test_unwritable_path_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScalewallError, match="cannot write"):
        write_measurements(_sample((GEMM,)), tmp_path / "no-such-dir" / "m.jsonl")
