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


def test_unknown_kind_is_one_line_exit_2() -> None:
    result = run_cli("catalog", "gizmos")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "gizmos" in result.stderr and "Traceback" not in result.stderr
