"""Trace readers: real openb files, small files in each public schema, bad rows."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from scalewall.errors import SpecError
from scalewall.sched import api
from scalewall.sched.traces.acme import read_acme
from scalewall.sched.traces.helios import read_helios
from scalewall.sched.traces.openb import openb_path, read_openb_nodes, read_openb_pods
from scalewall.sched.traces.pai import read_pai_machines, read_pai_tasks
from scalewall.sched.traces.philly import read_philly

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces"


def test_openb_counts_match_the_published_files() -> None:
    nodes = read_openb_nodes(openb_path("nodes"))
    assert len(nodes) == 1213
    assert sum(n.num_gpus for n in nodes) == 6212
    pods = read_openb_pods(openb_path("default")).frame
    assert len(pods) == 8152
    assert (pods["num_gpu"] == 0).sum() == 1088


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared traces not present")
def test_shipped_openb_copy_is_byte_identical() -> None:
    for name in ("openb_node_list_gpu_node.csv", "openb_pod_list_default.csv"):
        shipped = (openb_path("nodes").parent / name).read_bytes()
        assert shipped == (SHARED / "openb" / name).read_bytes()


def _bad_openb(tmp_path: Path) -> Path:
    lines = openb_path("default").read_text().splitlines()[:6]
    lines[3] = (
        lines[3].replace(",1,1000,", ",1,abc,", 1)
        if ",1,1000," in lines[3]
        else ("openb-pod-x,1000,1024,1,abc,,LS,Running,0,10,0")
    )
    path = tmp_path / "openb_pod_list_bad.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bad_row_names_file_and_line(tmp_path: Path) -> None:
    path = _bad_openb(tmp_path)
    with pytest.raises(SpecError) as err:
        read_openb_pods(path)
    message = str(err.value)
    assert f"{path}:4:" in message and "gpu_milli='abc'" in message
    assert "\n" not in message


def test_skip_bad_rows_counts_and_keeps_the_rest(tmp_path: Path) -> None:
    read = read_openb_pods(_bad_openb(tmp_path), skip_bad_rows=True)
    assert read.bad_rows == 1 and len(read.frame) == 4


def test_helios_and_acme_schema(tmp_path: Path) -> None:
    """Rows written in the Helios ``cluster_log.csv`` schema: no real rows of a Helios job log
    were found in a public repository (the logs ship only inside HeliosData's ``data.zip``).
    Acme's real rows are tested in ``test_acme_readme_rows``."""
    header = (
        "job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,"
        "end_time,duration,queue\n"
    )
    rows = (
        "1,u1,vcA,j,8,48,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:01:00,"
        "2020-04-01 01:01:00,3600,60\n"
        "2,u2,vcB,j,0,4,1,FAILED,2020-04-01 00:00:30,2020-04-01 00:00:30,"
        "2020-04-01 00:00:40,10,0\n"
    )
    path = tmp_path / "cluster_log.csv"
    path.write_text(header + rows)
    frame = read_helios(path).frame
    assert list(frame["run_s"]) == [3600.0, 10.0]
    assert list(frame["tenant"]) == ["vcA", "vcB"] and list(frame["num_gpu"]) == [8, 0]
    acme = tmp_path / "trace_seren.csv"
    acme.write_text(header + rows)
    assert list(read_acme(acme).frame["tenant"]) == ["u1", "u2"]
    assert api.trace_format(acme) == "acme"


def test_philly_schema(tmp_path: Path) -> None:
    jobs = [
        {
            "status": "Pass",
            "vc": "vc1",
            "jobid": "application_1",
            "user": "x",
            "submitted_time": "2017-10-03 10:00:00",
            "attempts": [
                {
                    "start_time": "2017-10-03 10:05:00",
                    "end_time": "2017-10-03 11:05:00",
                    "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}],
                }
            ],
        },
        {
            "status": "Killed",
            "vc": "vc2",
            "jobid": "application_2",
            "user": "y",
            "submitted_time": "2017-10-03 10:01:00",
            "attempts": [],
        },
    ]
    path = tmp_path / "cluster_job_log.json"
    path.write_text(json.dumps(jobs))
    with pytest.raises(SpecError, match=r"cluster_job_log.json:2: start_time"):
        read_philly(path)
    read = read_philly(path, skip_bad_rows=True)
    assert read.bad_rows == 1
    row = read.frame.iloc[0]
    assert (row["num_gpu"], row["submit_s"], row["run_s"]) == (2, 0.0, 3600.0)


def test_pai_schema(tmp_path: Path) -> None:
    """Task rows written in the ``pai_task_table`` schema: no real rows of it were found in a
    public repository (it ships only as an archive outside git); the machine list has a real
    excerpt (``test_pai_machine_spec_real_excerpt``)."""
    machines = tmp_path / "pai_machine_spec.csv"
    machines.write_text("m1,V100,96,512,8\nm2,CPU,96,512,0\n")
    nodes = read_pai_machines(machines)
    assert [n.num_gpus for n in nodes] == [8, 0] and nodes[0].gpu_model == "V100"
    tasks = tmp_path / "pai_task_table.csv"
    tasks.write_text(
        "j1,worker,2,Terminated,100,700,600,29,100,V100\n"
        "j2,tensorflow,1,Terminated,200,260,400,10,50,T4\n"
    )
    frame = read_pai_tasks(tasks).frame.set_index("job_id")
    assert frame.loc["j1", "num_gpu"] == 2 and frame.loc["j1", "run_s"] == 600
    assert frame.loc["j2", "num_gpu"] == 1 and frame.loc["j2", "gpu_milli"] == 500


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared traces not present")
def test_pai_machine_spec_real_file() -> None:
    nodes = read_pai_machines(SHARED / "pai2020" / "pai_machine_spec.csv")
    assert len(nodes) == 1896 or len(nodes) == 1897
    assert sum(n.num_gpus for n in nodes) == 6742


EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "traces"


def _iso_s(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def test_acme_readme_rows() -> None:
    # Real rows (tests/data/traces/acme/NOTICE.md). Seren's `duration` is end - start; Kalos's
    # counts from submission (its `duration` - `queue` is end - start), so each is checked
    # against its own columns.
    seren_path = EXCERPTS / "acme" / "trace_seren_readme.csv"
    seren, raw = read_acme(seren_path).frame, pd.read_csv(seren_path)
    assert list(seren["run_s"]) == list(raw["duration"].astype(float))
    assert list(seren["num_gpu"]) == list(raw["gpu_num"]) and set(seren["tenant"]) == {"u5907"}
    kalos_path = EXCERPTS / "acme" / "trace_kalos_readme.csv"
    kalos, raw = read_acme(kalos_path).frame, pd.read_csv(kalos_path)
    assert list(kalos["run_s"]) == list(raw["duration"] - raw["queue"])
    assert list(kalos["cpu_milli"]) == list(raw["cpu_num"] * 1000)


def test_acme_mixed_utc_offsets(tmp_path: Path) -> None:
    # Seren's rows at +08:00 and Kalos's at +00:00 in one file: times compare in UTC.
    columns = ["job_id", "user", "gpu_num", "cpu_num", "state", "submit_time", "start_time"]
    columns.append("end_time")
    rows = pd.concat(
        [
            pd.read_csv(EXCERPTS / "acme" / name, dtype=str)[columns]
            for name in ("trace_kalos_readme.csv", "trace_seren_readme.csv")
        ]
    )
    path = tmp_path / "trace_mixed.csv"
    rows.to_csv(path, index=False)
    frame = read_acme(path).frame
    first = min(_iso_s(t) for t in rows["submit_time"])
    assert list(frame["submit_s"]) == [_iso_s(t) - first for t in rows["submit_time"]]
    spans = zip(rows["start_time"], rows["end_time"], strict=True)
    assert list(frame["run_s"]) == [_iso_s(end) - _iso_s(start) for start, end in spans]


def test_pai_machine_spec_real_excerpt() -> None:
    # 40 real rows per GPU type (tests/data/traces/pai2020/NOTICE.md); headerless, as published.
    path = EXCERPTS / "pai2020" / "pai_machine_spec_excerpt.csv"
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    header = (EXCERPTS / "pai2020" / "pai_machine_spec.header").read_text().strip()
    assert header == "machine,gpu_type,cap_cpu,cap_mem,cap_gpu"
    nodes = read_pai_machines(path)
    assert [n.name for n in nodes] == [r[0] for r in rows]
    assert [n.num_gpus for n in nodes] == [int(r[4]) for r in rows]
    assert {n.gpu_model for n in nodes if n.num_gpus} == {r[1] for r in rows if int(r[4])}
