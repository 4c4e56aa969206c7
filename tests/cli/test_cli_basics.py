"""CLI plumbing: user errors give one line on stderr and exit code 2."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "from scalewall.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


def test_catalog_lists_models() -> None:
    result = run_cli("catalog", "models", "--json")
    assert result.returncode == 0, result.stderr
    assert "llama3-70b" in result.stdout


def test_catalog_shows_an_entry_by_the_names_other_commands_accept() -> None:
    """``--stack torchtitan`` and ``--gpu H100`` work, so ``catalog stacks torchtitan`` and
    ``catalog accelerators H100`` show those entries; an unknown name is one line, exit 2."""
    import json

    for kind, name, expected in (
        ("stacks", "torchtitan", "torchtitan-fsdp2"),
        ("stacks", "megatron-core-0.12", "megatron-core"),
        ("stacks", "megatron-core-0.17", "megatron-core-0.13"),
        ("accelerators", "H100", "h100-sxm-80gb"),
        ("models", "llama3-70b", "llama3-70b"),
    ):
        result = run_cli("catalog", kind, name, "--json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["id"] == expected
    result = run_cli("catalog", "stacks", "nosuch")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "nosuch" in result.stderr


def test_unknown_kind_is_one_line_exit_2() -> None:
    result = run_cli("catalog", "gizmos")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "gizmos" in result.stderr and "Traceback" not in result.stderr


def test_the_cli_runs_openblas_on_one_thread_unless_told_otherwise() -> None:
    # The commands' numerics gain nothing from OpenBLAS's thread pool, whose threads spin while
    # numpy loads; a value the user set is kept.
    import os

    code = "import scalewall.cli, os; print(os.environ['OPENBLAS_NUM_THREADS'])"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    unset = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert unset.stdout.strip() == "1"
    told = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "OPENBLAS_NUM_THREADS": "4"},
        capture_output=True,
        text=True,
    )
    assert told.stdout.strip() == "4"
