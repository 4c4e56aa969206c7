"""The root command loads no subcommand module: ``scalewall --help`` imports no numpy, pandas,
scipy or plotly, and what it lists for each command is the start of that command's help."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scalewall.cli.app import SUBCOMMANDS, load_command

HEAVY = ("numpy", "pandas", "scipy", "plotly", "scalewall.perf.step")


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\nfrom scalewall.cli.app import main\nsys.argv = ['scalewall', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', [m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED []" in out.stdout, out.stdout[-500:]
    for name in SUBCOMMANDS:
        assert name in out.stdout


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_listed_summary_is_the_command_help(name: str) -> None:
    real = " ".join((load_command(name).help or "").split())
    assert real.startswith(SUBCOMMANDS[name][1].rstrip(".")), (name, real[:200])
