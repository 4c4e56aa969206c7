"""``scalewall simulate`` and ``scalewall fgd`` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scalewall.sched.traces.openb import openb_path


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def _bad_trace(tmp_path: Path) -> Path:
    lines = openb_path("default").read_text().splitlines()[:40]
    lines[5] = "openb-pod-bad,12000,16384,1,1000,,LS,Running,oops,10,0"
    path = tmp_path / "openb_pod_list_x.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bad_row_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _bad_trace(tmp_path)
    result = run_cli("simulate", "--trace", str(path), "--json")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert f"{path}:6" in result.stderr and "creation_time" in result.stderr


def test_skip_bad_rows_replays_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli(
        "simulate",
        "--trace",
        str(_bad_trace(tmp_path)),
        "--skip-bad-rows",
        "--json",
        "--out",
        str(out),
        "--out-format",
        "csv",
        "--queue",
        "drf",
        "--placement",
        "fgd",
        "--plot",
        str(tmp_path / "p.html"),
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["bad_rows_skipped"] == 1 and summary["finished"] == 38
    assert (out / "jobs.csv").is_file() and (out / "timeseries.csv").is_file()
    _assert_offline(tmp_path / "p.html")


def _assert_offline(path: Path) -> None:
    """The figure carries plotly itself: it renders with no network."""
    html = path.read_text()
    assert '<script src="http' not in html
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inlined (~4.5 MB)


def test_fgd_json_prints_allocation_per_step() -> None:
    result = run_cli(
        "fgd",
        "--seeds",
        "1",
        "--policies",
        "bestfit,random",
        "--max-demand",
        "0.2",
        "--at",
        "0.2",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    steps = data["allocation"]["default"]["bestfit"]
    assert len(steps) == 20 and steps[-1]["demand_frac"] == 0.2


def test_fgd_plot_renders_offline(tmp_path: Path) -> None:
    plot = tmp_path / "fgd.html"
    args = ["--seeds", "1", "--policies", "random", "--max-demand", "0.05", "--at", "0.05"]
    result = run_cli("fgd", *args, "--plot", str(plot))
    assert result.returncode == 0, result.stderr
    _assert_offline(plot)


def test_unknown_policy_is_exit_2() -> None:
    result = run_cli("simulate", "--placement", "magic")
    assert result.returncode == 2 and "magic" in result.stderr


def test_simulate_on_a_catalog_cluster() -> None:
    result = run_cli(
        "simulate",
        "--cluster",
        "gb200-nvl72-576",
        "--trace",
        "synthetic:Kalos:200:1",
        "--placement",
        "topology",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["cluster"]["gpus"] == 576 and summary["cluster"]["models"] == {"gb200": 576}
    # Kalos jobs reach 1,024 GPUs: those never fit 576 and are skipped, not left to block FIFO.
    assert summary["skipped_never_fit"] > 0
    assert summary["finished"] + summary["unfinished"] + summary["skipped_never_fit"] == 200
    assert summary["finished"] > 150
    assert "can never fit" in result.stderr


def test_trace_failures_need_a_trace_that_has_them() -> None:
    result = run_cli(
        "simulate", "--trace", "synthetic:Seren:50:1", "--nodes", "8", "--trace-failures"
    )
    assert result.returncode == 2 and "records no failures" in result.stderr


def test_philly_replay_with_its_failures_and_the_step_model(tmp_path: Path) -> None:
    attempt = {
        "start_time": "2017-10-03 10:00:00",
        "end_time": "2017-10-03 12:00:00",
        "detail": [
            {"ip": "m1", "gpus": [f"gpu{i}" for i in range(8)]},
            {"ip": "m2", "gpus": [f"gpu{i}" for i in range(8)]},
        ],
    }
    retry = {**attempt, "start_time": "2017-10-03 12:10:00", "end_time": "2017-10-03 14:00:00"}
    jobs = [
        {
            "status": "Pass",
            "vc": "vc1",
            "jobid": "application_1",
            "user": "x",
            "submitted_time": "2017-10-03 10:00:00",
            "attempts": [attempt, retry],
        }
    ]
    log = tmp_path / "cluster_job_log"
    log.write_text(json.dumps(jobs))
    machines = tmp_path / "cluster_machine_list"
    machines.write_text(
        "machineId,number of GPUs,single GPU mem\n" + "".join(f"m{i},8,24GB\n" for i in range(1, 5))
    )
    result = run_cli(
        "simulate",
        "--trace",
        str(log),
        "--format",
        "philly",
        "--cluster",
        str(machines),
        "--trace-failures",
        "--step-model",
        "llama3-8b",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    # The failed attempt is replayed as the job's own failure, not as a node failure.
    assert summary["recorded_failures"] == 1 and summary["node_failures"] == 0
    assert summary["finished"] == 1 and summary["machines_with_recorded_failures"] == 1
