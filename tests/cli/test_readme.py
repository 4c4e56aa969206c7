"""Every ``scalewall`` example in the README's bash blocks runs as written (exit 0).

Examples that read a file the repository does not ship (``...``, your own config, a probe
measurement) are skipped with the file named; ``probe`` itself measures the machine and needs
the probe extra, so it is skipped too. Outputs land in a temporary folder.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
OUTPUT_OPTIONS = {"-o", "--out", "--output", "--plot", "--csv", "--results"}
INPUT_SUFFIXES = (".json", ".jsonl", ".toml", ".log", ".csv")


def readme_commands() -> list[str]:
    """The ``scalewall ...`` lines of the README's bash blocks, continuations joined and
    trailing comments dropped."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    commands = [shlex.split(line, comments=True) for line in lines]
    return [shlex.join(c) for c in commands if c[:1] == ["scalewall"]]


def missing_input(args: list[str]) -> str:
    """The first input file an example names that does not exist, or ""."""
    for previous, arg in zip(["", *args], args, strict=False):
        if arg == "...":
            return "... (arguments left out)"
        if previous in OUTPUT_OPTIONS:
            continue
        if (arg.endswith(INPUT_SUFFIXES) or arg.startswith("./")) and not Path(arg).exists():
            return arg
    return ""


def _marked(command: str) -> Any:
    # A sweep without --sizes searches every power of two up to 32,768 GPUs (about a minute).
    slow = command.startswith("scalewall wall") and "--sizes" not in command
    return pytest.param(command, marks=pytest.mark.slow) if slow else command


@pytest.mark.parametrize("command", [_marked(c) for c in readme_commands()])
def test_readme_example_runs(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Any]
) -> None:
    args = shlex.split(command)[1:]
    if args[0] == "probe" and len(args) > 1 and args[1] not in ("import-nccl", "show"):
        pytest.skip("probe measures this machine (needs the probe extra)")
    missing = missing_input(args)
    if missing:
        pytest.skip(f"needs a file the repository does not ship: {missing}")
    # Files the repository ships (docs/examples/...) keep their meaning from the work folder.
    args = [
        str(Path(a).resolve()) if a.startswith("docs/") and Path(a).exists() else a for a in args
    ]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = run_cli(*args)
    assert result.returncode == 0, f"{command}: exit {result.returncode}\n{result.stderr[-2000:]}"


def test_readme_philly_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Any]
) -> None:
    """The README's Philly example, on a two-attempt job log and a four-machine list."""
    attempt = {
        "start_time": "2017-10-03 10:00:00",
        "end_time": "2017-10-03 12:00:00",
        "detail": [{"ip": f"m{i}", "gpus": [f"gpu{g}" for g in range(8)]} for i in (1, 2)],
    }
    retry = {**attempt, "start_time": "2017-10-03 12:10:00", "end_time": "2017-10-03 14:00:00"}
    job = {"status": "Pass", "vc": "vc1", "jobid": "application_1", "user": "x"}
    job |= {"submitted_time": "2017-10-03 10:00:00", "attempts": [attempt, retry]}
    (tmp_path / "cluster_job_log").write_text(json.dumps([job]))
    machines = "".join(f"m{i},8,24GB\n" for i in range(1, 5))
    (tmp_path / "cluster_machine_list").write_text(
        "machineId,number of GPUs,single GPU mem\n" + machines
    )
    monkeypatch.chdir(tmp_path)
    text = README.read_text().replace("\\\n", " ")
    line = next(x for x in text.splitlines() if "--format philly" in x)
    args = shlex.split(line)[1:]
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr[-2000:]
