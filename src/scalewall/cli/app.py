"""The ``scalewall`` command. Each subcommand lives in its own module and registers itself here."""

from __future__ import annotations

import sys
from importlib import import_module

import typer

from scalewall.errors import ScalewallError

app = typer.Typer(
    name="scalewall",
    help="Plan AI training clusters: step time, plan search, scale-wall sweeps, goodput, cost.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Plan AI training clusters: step time, plan search, scale-wall sweeps, goodput, cost."""


# One module per subcommand; each defines ``register(app)``.
SUBCOMMANDS = [
    "scalewall.cli.catalog_cmd",
    "scalewall.cli.simulate_cmd",
    "scalewall.cli.fgd_cmd",
    "scalewall.cli.estimate_cmd",
    "scalewall.cli.validate_cmd",
    "scalewall.cli.probe_cmd",
    "scalewall.cli.cost_cmd",
    "scalewall.cli.goodput_cmd",
    "scalewall.cli.search_cmd",
    "scalewall.cli.wall_cmd",
    "scalewall.cli.calibrate_cmd",
    "scalewall.cli.report_cmd",
]


def _register_all() -> None:
    for name in SUBCOMMANDS:
        import_module(name).register(app)


_register_all()


def main() -> None:
    """Console-script entry: user errors print one line and exit 2, never a traceback."""
    try:
        app(standalone_mode=False)
    except ScalewallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        # click turns Ctrl-C inside a prompt into Abort; anywhere else it arrives as is.
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:
        # click's usage errors (typer vendors click, so match by shape, not by class)
        show = getattr(exc, "show", None)
        code = getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            sys.exit(code)
        raise
