"""``scalewall cost``: capex, opex, network bill of materials and cost per token of a cluster."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from scalewall._entry import PRETRAIN_SEQ_LEN
from scalewall._entry import cost as price_cluster
from scalewall.cli.common import (
    ClusterOpt,
    GpuOpt,
    GpusOpt,
    JsonOpt,
    ModelOpt,
    WideOpt,
)
from scalewall.cli.output import column, console, print_json, print_table
from scalewall.cost import (
    PriceBook,
    Tco,
    TrainingCost,
    load_prices,
)
from scalewall.units import DAY_S

J_PER_MWH = 3.6e9
YEAR_S = 365.25 * DAY_S


def _money(usd: float | None) -> str:
    if usd is None:
        return "-"
    if abs(usd) >= 1e6:
        return f"${usd / 1e6:,.2f}M"
    return f"${usd:,.2f}"


def _summary_rows(t: Tco, run: TrainingCost | None) -> list[tuple[str, str]]:
    rows = [
        ("cluster", f"{t.cluster}: {t.gpus:,} x {t.accelerator} in {t.nodes:,} nodes"),
        (
            "network",
            f"{t.bom.fabric}, {t.bom.switch_tiers} switch tiers, "
            f"{t.bom.switches:,} switches, {t.bom.transceivers:,} transceivers",
        ),
        (
            "power",
            f"{t.power.it_capacity_w / 1e6:,.2f} MW IT installed, "
            f"{t.power.facility_w / 1e6:,.2f} MW average at the meter (PUE {t.power.pue})",
        ),
        ("capex", _money(t.capex.total_usd)),
        ("opex per year", _money(t.opex.total_usd_per_s * YEAR_S)),
        ("owned, per GPU-hour", _money(t.usd_per_gpu_hour)),
        ("rented, per GPU-hour", _money(t.rental_usd_per_gpu_hour)),
        ("per effective PFLOP-day", _money(t.usd_per_effective_pflop_day)),
        (
            "per million tokens (owned / rented)",
            f"{_money(t.usd_per_million_tokens)} / {_money(t.rental_usd_per_million_tokens)}",
        ),
    ]
    if run is not None:
        rows += [
            (f"train {run.token_budget:.3g} tokens", f"{run.calendar_s / DAY_S:,.1f} days"),
            ("  cost owned / rented", f"{_money(run.owned_usd)} / {_money(run.rental_usd)}"),
            ("  energy at the meter", f"{run.energy_j / J_PER_MWH:,.0f} MWh"),
        ]
    return rows


def _print(t: Tco, run: TrainingCost | None, prices: PriceBook, wide: bool = False) -> None:
    print_table(
        [column("quantity"), column("value")],
        [list(r) for r in _summary_rows(t, run)],
        title="cost",
        wide=wide,
    )
    bom_columns = [
        column("tier"),
        column("switches", right=True),
        column("links", right=True),
        column("medium", 1),
        column("transceivers", 2, right=True),
        column("cables", 3, right=True),
    ]
    bom_rows = [
        [
            tier.name,
            f"{tier.switches:,}",
            f"{tier.links:,}",
            tier.medium,
            f"{tier.transceivers:,}",
            f"{tier.fiber_cables + tier.dac_cables:,}",
        ]
        for tier in t.bom.tiers
    ]
    print_table(bom_columns, bom_rows, title="network bill of materials", wide=wide)
    cap_rows = [
        [category, _money(t.capex.category_usd(category)), _money(per_s * YEAR_S)]
        for category, per_s in t.amortised_usd_per_s.items()
    ]
    cap_columns = [column("category"), column("capex", right=True), column("per year", right=True)]
    print_table(cap_columns, cap_rows, title="capex and amortisation", wide=wide)
    estimates = int(prices.table()["estimate"].sum())
    console.print(
        f"{estimates} of the prices used are public estimates: scalewall cost "
        "--list-prices shows every source and date; --prices FILE overrides."
    )


def _print_prices(prices: PriceBook, as_json: bool, wide: bool = False) -> None:
    frame = prices.table()
    if as_json:
        print_json(
            {"files": list(prices.files), "prices": frame.to_dict(orient="records")}, "prices"
        )
        return
    columns = [
        column("section"),
        column("key"),
        column("values"),
        column("date", 2),
        column("estimate", 1),
        column("source", 3),
    ]
    rows = []
    for row in frame.to_dict(orient="records"):
        values = ", ".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in row["values"].items()
        )
        rows.append(
            [
                str(row["section"]),
                str(row["key"]),
                values,
                str(row["date"]),
                "yes" if row["estimate"] else "",
                escape(str(row["source"])),
            ]
        )
    print_table(columns, rows, title="prices", wide=wide)


def cost_command(
    cluster: ClusterOpt = None,
    gpu: GpuOpt = None,
    gpus: GpusOpt = None,
    prices: list[Path] = typer.Option([], "--prices", help="Price TOML overriding built-ins."),
    facility: str = typer.Option("owned", help="owned (build, amortise) or colocation (rent)."),
    utilisation: float = typer.Option(1.0, help="Average accelerator load for power, 0..1."),
    tokens_per_s: float = typer.Option(0.0, help="Training tokens/s of the whole cluster."),
    model: ModelOpt = "",
    seq_len: int = typer.Option(
        0, help=f"Sequence length for FLOPs per token (0: model's, at most {PRETRAIN_SEQ_LEN})."
    ),
    mfu: float = typer.Option(0.0, help="Model FLOP utilisation, 0..1."),
    goodput: float = typer.Option(1.0, help="Share of calendar time that trains, 0..1."),
    tokens: float = typer.Option(0.0, help="Token budget to train, e.g. 15e12."),
    list_prices: bool = typer.Option(False, "--list-prices", help="Show every price."),
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Price a cluster (default: the 1,024-GPU DGX H100 SuperPOD): capex, opex, network bill of
    materials, cost per GPU-hour, per effective PFLOP-day and per million tokens. A model
    (--model) with --mfu or --tokens-per-s gives the per-token figures; --tokens a budget."""
    if list_prices:
        _print_prices(load_prices(prices), as_json, wide)
        return
    run = price_cluster(
        cluster,
        gpu=gpu,
        gpus=gpus,
        prices=prices,
        facility=facility,
        utilisation=utilisation,
        tokens_per_s=tokens_per_s,
        model=model,
        seq_len=seq_len,
        mfu=mfu,
        goodput=goodput,
        tokens=tokens,
    )
    if as_json:
        print_json(run.to_dict(), "cost")
        return
    _print(run.tco, run.training, load_prices(prices), wide)


def register(app: typer.Typer) -> None:
    app.command("cost")(cost_command)
