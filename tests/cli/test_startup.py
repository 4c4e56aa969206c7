"""The root command loads no subcommand module: ``scalewall --help`` imports no numpy, pandas,
scipy or plotly, and what it lists for each command is the start of that command's help."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import typer

import scalewall
from scalewall.cli import app as app_module
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


def test_ctrl_c_exits_130_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted_command(name: str) -> Any:
        holder = typer.Typer()
        holder.callback()(lambda: None)

        @holder.command(name)
        def _work() -> None:
            raise KeyboardInterrupt

        return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]

    monkeypatch.setattr(app_module, "load_command", interrupted_command)
    monkeypatch.setattr(sys, "argv", ["scalewall", "estimate"])
    with pytest.raises(SystemExit) as exc:
        app_module.main()
    assert exc.value.code == 130
    assert capsys.readouterr().err.strip() == "interrupted"


def test_estimate_imports_no_pydantic_and_reads_few_catalog_files() -> None:
    """typer 0.29 coerces options through pydantic (~0.2 s); entries named by id are read alone."""
    code = (
        "import sys\nfrom scalewall.catalog import loader\nfrom scalewall.cli.app import main\n"
        "read = []\nreal = loader.load_toml\n"
        "loader.load_toml = lambda path: read.append(path) or real(path)\n"
        "sys.argv = ['scalewall', 'estimate', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('PYDANTIC', 'pydantic' in sys.modules, 'READ', len(read))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "PYDANTIC False" in out.stdout, out.stdout[-300:]
    from scalewall import catalog

    read = int(out.stdout.rsplit("READ", 1)[1])
    # The model, accelerator, fabric, link and stack by id, plus the systems scanned for the
    # accelerator's default system; far below the whole catalog.
    assert read <= 5 + len(catalog.systems()), out.stdout[-300:]


def test_search_json_imports_no_rich_and_prints_the_same_document() -> None:
    """A ``--json`` run draws nothing, so it loads neither rich nor the table helpers; its
    document is the API's."""
    args = ["search", "-m", "megatron-1.7b", "--gpu", "h100-sxm-80gb", "--gpus", "8", "--json"]
    code = (
        "import sys\nfrom scalewall.cli.app import main\n"
        f"sys.argv = ['scalewall', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m == 'rich' or m.startswith('rich.') "
        "or m == 'scalewall.cli.output'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    doc, _, loaded = out.stdout.rpartition("LOADED")
    assert loaded.strip() == "[]", loaded
    found = json.loads(doc)
    api = scalewall.search("megatron-1.7b", gpu="h100-sxm-80gb", gpus=8).to_dict()
    found.pop("elapsed_s"), api.pop("elapsed_s")
    assert found == json.loads(json.dumps(api))
