"""The ``scalewall`` command. Each subcommand lives in its own module and registers itself on
a Typer app; this module loads a subcommand's module only when that subcommand runs, so
``scalewall --help`` imports none of them (nor numpy, pandas, scipy or plotly)."""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any

import typer
from typer.core import TyperGroup

from scalewall.errors import ScalewallError

# name: (module defining ``register(app)``, the summary ``scalewall --help`` lists: the start
# of the command's own help, which tests/cli/test_startup.py checks).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "catalog": (
        "scalewall.cli.catalog_cmd",
        "List the built-in catalog (accelerators, systems, links, fabrics, clusters, models).",
    ),
    "simulate": (
        "scalewall.cli.simulate_cmd",
        "Replay a trace: queueing delay, JCT, utilisation, fragmentation, per-tenant GPU-hours.",
    ),
    "fgd": (
        "scalewall.cli.fgd_cmd",
        "GPU allocation against arrived demand for Random, DotProd, GpuClustering, GpuPacking, "
        "BestFit and FGD",
    ),
    "estimate": (
        "scalewall.cli.estimate_cmd",
        "Estimate one training step: time, tokens/s, MFU, memory and its breakdown.",
    ),
    "validate": (
        "scalewall.cli.validate_cmd",
        "Predict every case of a scalewall-runs/1 file",
    ),
    "cost": (
        "scalewall.cli.cost_cmd",
        "Price a cluster (default: the 1,024-GPU DGX H100 SuperPOD): capex, opex, network bill "
        "of materials, cost per GPU-hour, per effective PFLOP-day and per million tokens.",
    ),
    "goodput": (
        "scalewall.cli.goodput_cmd",
        "Failures, checkpoint cost, optimal interval and goodput of one training job.",
    ),
    "search": (
        "scalewall.cli.search_cmd",
        "Search every valid parallel plan; print the best with breakdown and what limits each.",
    ),
    "wall": (
        "scalewall.cli.wall_cmd",
        "Sweep cluster sizes, re-searching the best plan at each: where scaling stops, and why.",
    ),
    "explore": (
        "scalewall.cli.explore_cmd",
        "Search every point of models x clusters x sizes x fabrics x batch rules into a dataset.",
    ),
    "calibrate": (
        "scalewall.cli.calibrate_cmd",
        "Fit the step model's efficiency constants to your measurements",
    ),
    "fit": (
        "scalewall.cli.fit_cmd",
        "Fit the constants that only whole training steps determine",
    ),
    "report": (
        "scalewall.cli.report_cmd",
        "Write one HTML page (opens offline) comparing cluster options for a model",
    ),
    "schema": (
        "scalewall.cli.schema_cmd",
        "Print the JSON Schema of a --json output kind or an input file (no KIND: list them).",
    ),
    "serve": (
        "scalewall.cli.serve_cmd",
        "Serve the REST API (OpenAPI page at /docs) and the browser UI (needs the web extra).",
    ),
    "probe": (
        "scalewall.cli.probe_cmd",
        "Measure GEMM, attention, device memory and collectives (needs the probe extra).",
    ),
}


def load_command(name: str) -> Any:
    """The click command ``name`` as its module registers it (imports that module)."""
    module, _ = SUBCOMMANDS[name]
    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    holder.callback()(lambda: None)  # a group, so a single command keeps its name
    import_module(module).register(holder)
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


class LazyGroup(TyperGroup):
    """Lists subcommands from ``SUBCOMMANDS`` and imports one only to run it or show its help."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in SUBCOMMANDS:
            return None
        # What the root help lists; resolve_command swaps in the real command to run it.
        summary = SUBCOMMANDS[cmd_name][1]
        return typer.core.TyperCommand(cmd_name, help=summary, short_help=summary)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[Any, Any, list[str]]:
        name, _, rest = super().resolve_command(ctx, args)
        return name, load_command(name) if name else None, rest


app = typer.Typer(
    name="scalewall",
    cls=LazyGroup,
    help="Plan AI training clusters: step time, plan search, scale-wall sweeps, goodput, cost.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Plan AI training clusters: step time, plan search, scale-wall sweeps, goodput, cost."""


INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""


def main() -> None:
    """Console-script entry: user errors print one line and exit 2, never a traceback."""
    try:
        # Outside standalone mode typer returns the code of an Exit (Ctrl-C becomes Exit(130))
        # instead of raising it.
        code = app(standalone_mode=False)
    except ScalewallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        # click turns Ctrl-C inside a prompt into Abort; anywhere else it arrives as is.
        print("interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
    except Exception as exc:
        # click's usage errors (typer vendors click, so match by shape, not by class)
        show = getattr(exc, "show", None)
        code = getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            sys.exit(code)
        raise
    if isinstance(code, int) and code:
        if code == INTERRUPTED:
            print("interrupted", file=sys.stderr)
        sys.exit(code)
