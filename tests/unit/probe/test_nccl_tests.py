"""nccl-tests text output -> records, on sample logs in the public format (tests/data/probe)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalewall.errors import SpecError
from scalewall.probe import bus_bandwidth_factor, parse_nccl_tests, read_nccl_tests
from scalewall.probe.nccl_tests import _nccl_code_version

GB = 1e9


def _printed_rows(path: Path) -> list[list[str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        tokens = line.split(":", 1)[-1].split() if "<stdout>:" in line else line.split()
        if tokens and tokens[0].isdigit() and len(tokens) >= 12:
            rows.append(tokens)
    return rows


def test_all_reduce_single_node_new_format(data_dir: Path) -> None:
    path = data_dir / "all_reduce_perf_8xh100.txt"
    m = read_nccl_tests(path)
    assert m.source == "nccl-tests"
    assert {r.kind for r in m.records} == {"all_reduce"}
    assert m.machine.world_size == 8 and m.machine.num_nodes == 1
    assert m.machine.device_name == "NVIDIA H100 80GB HBM3"
    assert m.versions.nccl == "2.21.5" and m.versions.cuda == "12.4"
    rows = _printed_rows(path)
    assert len(m.records) == 2 * len(rows)  # out-of-place and in-place per row
    for rec, row in zip(m.records[::2], rows, strict=True):
        assert rec.variant == "out_of_place" and rec.dtype == "fp32"
        assert rec.size_bytes == int(row[0])
        assert rec.time_s == pytest.approx(float(row[5]) * 1e-6, rel=1e-12)
        # printed time and bandwidths carry 2 decimals: the bound is half a unit of the last
        # bandwidth digit plus the bandwidth's share of half a unit of the time's last digit
        algbw, busbw, time_us = float(row[6]), float(row[7]), float(row[5])
        assert rec.bytes_per_s / GB == pytest.approx(algbw, abs=0.005 + algbw * 0.005 / time_us)
        assert rec.busbw_bytes_per_s / GB == pytest.approx(
            busbw, abs=0.005 + busbw * 0.005 / time_us
        )
        assert rec.group_size == 8 and rec.wrong == 0


def test_multi_node_mpi_log_with_prefixes(data_dir: Path) -> None:
    m = read_nccl_tests(data_dir / "all_gather_perf_2x8xa100_mpi.txt")
    assert {r.kind for r in m.records} == {"all_gather"}  # from the file name
    assert m.machine.world_size == 16
    assert m.machine.num_nodes == 2 and m.machine.devices_per_node == 8
    assert m.machine.hostnames == ("node-a01", "node-a02")
    assert all(r.num_nodes == 2 and r.group_size == 16 for r in m.records)
    assert m.versions.nccl == "2.18.3"  # from the NCCL INFO line
    big = max(m.records, key=lambda r: r.size_bytes)
    assert big.busbw_bytes_per_s == pytest.approx(big.bytes_per_s * 15 / 16)


def test_old_release_columns_and_dtypes(data_dir: Path) -> None:
    m = read_nccl_tests(data_dir / "reduce_scatter_perf_4xa100_old.txt")
    assert {r.kind for r in m.records} == {"reduce_scatter"}
    assert {r.dtype for r in m.records} == {"bf16", "fp16"}
    assert m.machine.world_size == 4
    assert all(r.wrong is None for r in m.records)  # 'error' column is not a count


def test_alltoall_from_collective_line(data_dir: Path) -> None:
    m = read_nccl_tests(data_dir / "alltoall_perf_8xh100.txt")
    assert {r.kind for r in m.records} == {"all_to_all"}
    assert m.versions.nccl == "2.21.5"  # nccl-library=22105


def test_table_only_recovers_group_size(data_dir: Path) -> None:
    m = read_nccl_tests(data_dir / "allreduce_table_only.txt")
    assert m.machine.world_size == 4  # busbw/algbw = 1.5 = 2(n-1)/n
    assert all(r.group_size == 4 for r in m.records)
    forced = read_nccl_tests(data_dir / "allreduce_table_only.txt", group_size=8)
    assert forced.records[0].busbw_bytes_per_s == pytest.approx(
        forced.records[0].bytes_per_s * 1.75
    )


def test_truncated_row_names_file_and_line(data_dir: Path) -> None:
    path = data_dir / "all_reduce_perf_truncated.txt"
    with pytest.raises(SpecError, match=rf"{path.name}:20: row="):
        read_nccl_tests(path)


def test_kind_needed_when_nothing_says(data_dir: Path) -> None:
    lines = (data_dir / "allreduce_table_only.txt").read_text().splitlines()
    with pytest.raises(SpecError, match="kind"):
        parse_nccl_tests(lines, "log.txt")
    m = parse_nccl_tests(lines, "log.txt", kind="all_reduce")
    assert m.records[0].kind == "all_reduce"
    with pytest.raises(SpecError, match="kind"):
        parse_nccl_tests(lines, "log.txt", kind="gather")


def test_no_rows_is_an_error() -> None:
    with pytest.raises(SpecError, match="no nccl-tests result rows"):
        parse_nccl_tests(["# nThread 1 nGpus 8", "hello"], "empty.txt")


def test_nccl_version_codes() -> None:
    assert _nccl_code_version(22105) == "2.21.5"
    assert _nccl_code_version(2708) == "2.7.8"


HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong"
)
PROGRAM = {
    "all_reduce": "all_reduce_perf",
    "all_gather": "all_gather_perf",
    "reduce_scatter": "reduce_scatter_perf",
    "all_to_all": "alltoall_perf",
}


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(sorted(PROGRAM)),
    n=st.integers(1, 64),
    rows=st.lists(
        st.tuples(st.integers(1, 2**34), st.floats(1.0, 1e7, allow_nan=False)),
        min_size=1,
        max_size=8,
    ),
)
def test_any_wellformed_table_parses(kind: str, n: int, rows: list[tuple[int, float]]) -> None:
    lines = [f"# Collective test starting: {PROGRAM[kind]}", "# Using devices"]
    lines += [
        f"#  Rank {r:2d} Group  0 Pid {100 + r} on host{r // 8} device {r % 8} [0x1{r % 8}] GPU"
        for r in range(n)
    ]
    lines.append(HEADER)
    for size, t_us in rows:
        group = f"{t_us:.2f} 1.00 1.00 0"
        lines.append(f"{size} {size // 4} float sum -1 {group} {group}")
    m = parse_nccl_tests(lines, "generated.txt")
    assert len(m.records) == 2 * len(rows)
    assert m.machine.num_nodes == (n - 1) // 8 + 1
    for rec, (size, t_us) in zip(m.records[::2], rows, strict=True):
        assert rec.kind == kind and rec.group_size == n and rec.size_bytes == size
        assert rec.time_s == pytest.approx(float(f"{t_us:.2f}") * 1e-6, rel=1e-12)
        assert rec.busbw_bytes_per_s == pytest.approx(
            rec.bytes_per_s * bus_bandwidth_factor(kind, n), rel=1e-12
        )
