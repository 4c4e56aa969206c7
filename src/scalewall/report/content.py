"""A report's content in one language: summary, verdict, comparison, growth, failure and BOM
tables as text, next to the numbers (``data``). ``--json`` prints this; the HTML renders it."""

from __future__ import annotations

import math
from typing import Any

from scalewall.plan.format import format_plan, modules_suffix
from scalewall.report.advice import CHECKPOINT_LOSS_LIMIT
from scalewall.report.build import Report
from scalewall.report.strings import strings
from scalewall.search.engine import MEMORY_WARN_FRAC
from scalewall.units import DAY_S, HOUR_S

GIB = 2**30
TOP_CAUSES = 3


def money(usd: float | None) -> str:
    if usd is None or math.isnan(usd):
        return "-"
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(usd) >= scale:
            return f"${usd / scale:,.2f}{suffix}"
    return f"${usd:,.2f}"


def count_text(n: float) -> str:
    """15e12 -> 15T, 1.6e9 -> 1.6B."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(n) >= scale:
            return f"{n / scale:,.3g}{suffix}"
    return f"{n:,.0f}"


def pct(frac: float) -> str:
    return f"{frac:.1%}"


def points(t: dict[str, str], frac: float) -> str:
    """A change of a fraction in percentage points, signed."""
    return t["unit.points"].format(value=f"{frac * 100:+.1f}")


def bytes_text(n: float) -> str:
    return f"{n / 1e12:,.2f} TB" if n >= 1e12 else f"{n / GIB:,.1f} GiB"


def rate_text(bytes_per_s: float) -> str:
    return f"{bytes_per_s / 1e9:,.0f} GB/s"


def duration(t: dict[str, str], seconds: float) -> str:
    """Seconds in the largest unit that keeps the number readable."""
    if seconds >= 2 * DAY_S:
        return t["unit.days"].format(value=f"{seconds / DAY_S:,.1f}")
    if seconds >= 2 * HOUR_S:
        return t["unit.hours"].format(value=f"{seconds / HOUR_S:,.1f}")
    if seconds >= 120:
        return t["unit.minutes"].format(value=f"{seconds / 60:,.1f}")
    return t["unit.seconds"].format(value=f"{seconds:,.1f}")


def plan_text(row: dict[str, Any]) -> str:
    """A sweep row's plan as every view writes it (``scalewall.plan.format_plan``), with the
    recompute modules it adds to fit (``modules_suffix``)."""
    return format_plan(row["plan"], short=True) + modules_suffix(row.get("recompute_modules", ()))


def loss_name(t: dict[str, str], part: str | None) -> str:
    return "-" if part is None else t.get(f"loss.{part}", part)


def advice_text(t: dict[str, str], item: dict[str, Any], prefix: str = "inv") -> str:
    """One investment (``inv``) or scheduling need (``need``) as a sentence."""
    kind = item["kind"]
    fields: dict[str, Any] = {
        "part": loss_name(t, item.get("part")),
        "tier": item.get("tier", ""),
        "switches": f"{item.get('switches_added', 0):,}",
        "usd": money(item.get("network_usd_added")),
        "per_replica": f"{item.get('per_replica', 0):g}",
        "goodput": pct(item.get("goodput_frac", 0.0)),
        "spare_nodes": item.get("spare_nodes", 0),
        "loss": pct(item.get("loss_frac", 0.0)),
        "bw": rate_text(item.get("bandwidth_bytes_per_s", 0.0)),
        "needed": rate_text(item.get("needed_bytes_per_s", 0.0)),
        "restart": duration(t, item.get("restart_s", 0.0)),
        "per_day": f"{item.get('per_day', 0.0):.1f}",
        "nodes": f"{item.get('nodes', 0):,}",
        "days": f"{item.get('days_between', 0.0):.1f}",
        "interval": duration(t, item.get("interval_s", 0.0)),
    }
    return t[f"{prefix}.{kind}"].format(**fields)


def _largest_model(t: dict[str, str], option: dict[str, Any]) -> str:
    inside = [c for c in option["candidates"] if c["in_target"]]
    if not inside:
        models = ", ".join(c["id"] for c in option["candidates"])
        return t["cell.no_model"].format(models=models)
    best = inside[-1]
    return t["cell.largest_model"].format(
        model=best["id"], days=f"{best['calendar_s'] / DAY_S:.0f}"
    )


def _scaling(option: dict[str, Any]) -> tuple[float, int]:
    """The option's per-GPU throughput as a share of the best per-GPU throughput of its sweep
    (at most 100%), and the size of that best."""
    rows = option["sweep"]["rows"]
    ref = option["sweep"]["knee_vs_best"]
    row = next(r for r in rows if r["gpus"] == option["gpus"])
    return row["tokens_per_s_per_gpu"] / ref["best_tokens_per_s_per_gpu"], ref["best_gpus"]


def _feasible_cell(t: dict[str, str], o: dict[str, Any]) -> str:
    key = "cell.feasible" if o["feasible"] else "cell.infeasible"
    return t[key].format(days=f"{o['calendar_s'] / DAY_S:,.1f}", late=f"{o['late_s'] / DAY_S:,.1f}")


def _comparison(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    sc = data["scenario"]
    opts = data["options"]
    tokens = count_text(sc["token_budget"])
    days = f"{sc['target_days']:.0f}"
    rows: list[list[str]] = []

    def add(label: str, cell: Any) -> None:
        rows.append([label, *(cell(o) for o in opts)])

    add(
        t["dim.scale"],
        lambda o: t["cell.scale"].format(
            gpus=f"{o['gpus']:,}",
            nodes=f"{o['nodes']:,}",
            mw=f"{o['cost']['it_capacity_w'] / 1e6:,.1f}",
        ),
    )
    outcomes = {o["name"]: o for o in data["decision"]["options"]}
    add(t["dim.feasible"].format(days=days), lambda o: _feasible_cell(t, outcomes[o["name"]]))
    add(
        t["dim.total"],
        lambda o: t["cell.total"].format(
            total=money(outcomes[o["name"]]["total_usd"]),
            compute=money(outcomes[o["name"]]["compute_usd"]),
            time=money(outcomes[o["name"]]["time_usd"] + outcomes[o["name"]]["penalty_usd"]),
        ),
    )
    add(t["dim.plan"], lambda o: plan_text(o["best"]))
    add(t["dim.largest_model"].format(days=days), lambda o: _largest_model(t, o))
    add(
        t["dim.network"],
        lambda o: t["cell.network"].format(
            tiers=o["bom"]["switch_tiers"],
            switches=f"{o['bom']['switches']:,}",
            transceivers=f"{o['bom']['transceivers']:,}",
            fabric=o["bom"]["fabric"],
        ),
    )
    add(
        t["dim.checkpoint"],
        lambda o: t["cell.checkpoint"].format(
            size=bytes_text(o["reliability"]["checkpoint_bytes"]),
            interval=duration(t, o["reliability"]["interval_s"]),
            write=duration(t, o["reliability"]["checkpoint_write_s"]),
            loss=pct(o["reliability"]["loss_fracs"]["checkpoint"]),
        ),
    )
    add(
        t["dim.failures"],
        lambda o: t["cell.failures"].format(
            per_day=f"{o['reliability']['interruptions_per_day']:.2f}",
            mttf=duration(t, o["reliability"]["mttf_s"]),
            expected=f"{o['reliability']['expected_interruptions']:,.0f}",
        ),
    )
    add(
        t["dim.scheduling"],
        lambda o: t["sep"].join(advice_text(t, n, "need") for n in o["scheduling"]),
    )
    add(t["dim.capex"], lambda o: money(o["cost"]["capex_usd"]))
    add(t["dim.opex"], lambda o: money(o["cost"]["opex_usd_per_year"]))
    add(t["dim.flop_cost"], lambda o: money(o["cost"]["usd_per_effective_pflop_day"]))
    add(
        t["dim.token_cost"],
        lambda o: (
            f"{money(o['cost']['usd_per_million_tokens'])} / "
            f"{money(o['cost']['rental_usd_per_million_tokens'])}"
        ),
    )
    add(
        t["dim.efficiency"],
        lambda o: t["cell.efficiency"].format(
            mfu=pct(o["best"]["mfu"]),
            goodput=pct(o["reliability"]["goodput_frac"]),
            scaling=f"{_scaling(o)[0]:.0%}",
            base=f"{_scaling(o)[1]:,}",
        ),
    )
    add(
        t["dim.train"].format(tokens=tokens),
        lambda o: t["cell.train"].format(
            days=f"{o['training']['calendar_s'] / DAY_S:,.1f}",
            owned=money(o["training"]["owned_usd"]),
            rented=money(o["training"]["rental_usd"]),
            mwh=f"{o['training']['energy_mwh']:,.0f}",
        ),
    )
    return {"columns": [t["col.dimension"], *(o["name"] for o in opts)], "rows": rows}


def _days(seconds: float) -> str:
    return f"{seconds / DAY_S:,.1f}"


def _params_text(n: float) -> str:
    return count_text(n)


def _reason(t: dict[str, str], r: dict[str, Any]) -> str:
    kind = r["kind"]
    fields: dict[str, Any] = {
        "names": ", ".join(r.get("names", [])),
        "rival": r.get("rival", ""),
        "saved": money(r.get("saved_usd", 0.0)),
        "eff": pct(r.get("effective_frac", 0.0)),
        "rival_eff": pct(r.get("rival_effective_frac", 0.0)),
        "days": f"{r.get('days_saved', 0.0):,.1f}",
        "time_saved": money(r.get("time_saved_usd", 0.0)),
        "extra": money(r.get("extra_compute_usd", 0.0)),
    }
    return t[f"why.{kind}"].format(**fields)


def _compute_note(t: dict[str, str], choice: dict[str, Any], late: dict[str, Any]) -> str:
    """The chosen option's compute against what a late option would have spent."""
    ratio = choice["compute_usd"] / late["compute_usd"] - 1.0
    key = "why.compute_more" if ratio >= 0 else "why.compute_less"
    return t[key].format(
        choice=choice["name"],
        name=late["name"],
        ratio=pct(abs(ratio)),
        usd=money(choice["compute_usd"]),
        late_usd=money(late["compute_usd"]),
        eff=pct(choice["effective_frac"]),
        late_eff=pct(late["effective_frac"]),
    )


def _breakeven_line(t: dict[str, str], data: dict[str, Any]) -> str | None:
    be = data["decision"]["breakeven"]
    if be is None:
        return None
    sc = data["scenario"]
    m = be["model"]
    kind = m["kind"]
    model_part = t[f"be.model.{kind}"].format(
        big=be["big"],
        params=_params_text(m["params"]) if m["params"] else "-",
        model=m.get("model", ""),
        between=" - ".join(m.get("between", [])),
        reason=t.get(f"be.reason.{m.get('reason', '')}", ""),
        days=f"{sc['target_days']:.0f}",
    )
    value = be["value_of_time_usd_per_day"]
    return t["be.line"].format(
        model_part=model_part,
        model=data["model"]["id"],
        small=be["small"],
        tokens=count_text(be["token_budget"]),
        days=_days(be["target_s"]),
        value=t["be.value_none"] if value is None else money(value),
    )


def verdict(t: dict[str, str], data: dict[str, Any]) -> list[str]:
    """The headline, five bullets or fewer: which option meets the target and at what total
    cost, the options that cannot, the one or two reasons, the break-even, the cost basis."""
    d = data["decision"]
    sc = data["scenario"]
    by_name = {o["name"]: o for o in d["options"]}
    choice = by_name[d["choice"]["name"]]
    fields = {
        "name": choice["name"],
        "days_target": f"{sc['target_days']:.0f}",
        "tokens": count_text(sc["token_budget"]),
        "model": data["model"]["id"],
        "days": _days(choice["calendar_s"]),
        "late": _days(choice["late_s"]),
        "total": money(choice["total_usd"]),
        "compute": money(choice["compute_usd"]),
        "time": money(choice["time_usd"] + choice["penalty_usd"]),
    }
    key = "verdict.choice" if d["choice"]["feasible"] else "verdict.none"
    lines = [t[key].format(**fields)]
    late = [o for o in d["options"] if not o["feasible"] and o is not choice]
    if late:
        items = t["sep"].join(
            t["verdict.late_item"].format(
                name=o["name"], days=_days(o["calendar_s"]), late=_days(o["late_s"])
            )
            for o in late
        )
        lines.append(t["verdict.infeasible"].format(items=items))
    reasons = [_reason(t, r) for r in d["choice"]["reasons"]]
    if late and d["choice"]["feasible"] and len(reasons) < 2:
        reasons.append(_compute_note(t, choice, late[0]))
    if reasons:
        lines.append(t["verdict.why"].format(reasons=t["sep"].join(reasons)))
    be = _breakeven_line(t, data)
    if be:
        lines.append(be)
    lines.append(
        t["verdict.basis"].format(
            value=money(d["value_of_time_usd_per_day"]),
            penalty=money(d["late_penalty_usd_per_day"]),
        )
    )
    return lines


def _growth(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    columns = [
        t["col.gpus"],
        t["col.mfu"],
        t["col.goodput"],
        t["col.days"],
        t["col.usd_per_mtok"],
        t["col.capex"],
        t["col.tiers"],
        t["col.dominant"],
        t["col.rising"],
        t["col.invest"],
    ]
    rows = []
    for s in data["growth"]:
        rows.append(
            [
                f"{s['gpus']:,}",
                pct(s["mfu"]),
                pct(s["goodput_frac"]),
                f"{s['calendar_s'] / DAY_S:,.1f}",
                money(s["usd_per_million_tokens"]),
                money(s["capex_usd"]),
                str(s["switch_tiers"]),
                loss_name(t, s["dominant"]),
                loss_name(t, s["rising"]),
                t["sep"].join(advice_text(t, i) for i in s["invest"]) or t["summary.none"],
            ]
        )
    return {"columns": columns, "rows": rows}


def _stage_numbers(t: dict[str, str], s: dict[str, Any]) -> str:
    kind = s["stage"]
    if kind == "bringup":
        return t["stage.bringup"].format(
            rates=s["failure_rates"],
            hw=f"{s['hardware_failures_per_day']:.2f}",
            nodes=f"{s['nodes']:,}",
            burn=duration(t, s["burn_in_s"]),
            found=f"{s['burn_in_failures']:.1f}",
            repair=f"{s['nodes_in_repair']:.1f}",
            avail=pct(s["availability_frac"]),
        )
    if kind == "governance":
        runs = t["sep"].join(
            t["stage.policy"].format(
                queue=r["queue"],
                placement=r["placement"],
                wait=duration(t, r["queue_delay_mean_s"]),
                worst=duration(t, r["worst_tenant_queue_delay_s"]),
                util=pct(r["utilisation_frac"]),
                frag=pct(r["fragmentation_frac"]),
                jain=f"{r['fairness_jain']:.2f}",
            )
            for r in s["runs"]
        )
        return t["stage.governance"].format(
            jobs=f"{s['jobs']:,}",
            tenants=s["tenants"],
            sharing=pct(s["sharing_job_frac"]),
            multi=pct(s["multi_gpu_job_frac"]),
            span=duration(t, s["span_s"]),
            load=pct(s["load_frac"]),
            gpus=f"{s['gpus']:,}",
            runs=runs,
            best=f"{s['best']['queue']} + {s['best']['placement']}",
        )
    if kind == "network":
        return t["stage.network"].format(
            tiers=s["switch_tiers"],
            switches=f"{s['switches']:,}",
            over=", ".join(f"{o:g}:1" for o in s["oversubscription"]) or "-",
            size=bytes_text(s["checkpoint_bytes"]),
            bw=rate_text(s["checkpoint_write_bytes_per_s"]),
            loss=pct(s["checkpoint_loss_frac"]),
            needed=rate_text(s["checkpoint_needed_bytes_per_s"]),
            limit=pct(CHECKPOINT_LOSS_LIMIT),
            data=f"{s['data_loading_bytes_per_s'] / 1e6:,.1f} MB/s",
            bytes=s["data_bytes_per_token"],
        )
    return _operations_text(t, s)


def _operations_text(t: dict[str, str], s: dict[str, Any]) -> str:
    phases = t["sep"].join(
        f"{t[f'phase.{name}']} {duration(t, sec)}" for name, sec in s["restart_phases_s"].items()
    )
    levers = t["sep"].join(
        t["stage.lever"].format(
            name=t[f"lever.{r['lever']}"],
            goodput=pct(r["goodput_frac"]),
            gain=points(t, r["gain_frac"]),
        )
        for r in s["levers"]
    )
    spares = s["spare_nodes"]
    return t["stage.operations"].format(
        per_day=f"{s['interruptions_per_day']:.1f}",
        spares=f"{spares:,}" if spares >= 0 else t["stage.spares_none"],
        repairs=f"{s['repairs_per_day']:.1f}",
        in_repair=f"{s['nodes_in_repair']:.1f}",
        repair=duration(t, s["repair_s"]),
        restart=duration(t, s["restart_s"]),
        phases=phases,
        dominant=t[f"phase.{s['dominant_restart_phase']}"],
        restart_loss=pct(s["restart_loss_frac"]),
        storage=s["storage"],
        write=duration(t, s["checkpoint_write_s"]),
        restore=duration(t, s["checkpoint_restore_s"]),
        auto=t["stage.auto_yes"] if s["automatic_restarts"] else t["stage.auto_no"],
        goodput=pct(s["goodput_frac"]),
        levers=levers,
    )


def stage_loss_text(t: dict[str, str], loss: dict[str, Any]) -> str:
    kind = loss["kind"]
    name = t.get(kind) or t.get(f"stage_loss.{kind}", kind)
    return t["stage.loss"].format(name=name, frac=pct(loss["frac"]))


def _stages(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    """The four growth stages: size, the model's numbers, the dominant loss, the investment."""
    columns = [t["col.stage"], t["col.gpus"], t["col.numbers"], t["col.dominant"], t["col.invest"]]
    rows = []
    for s in data["stages"]:
        invest = t["sep"].join(advice_text(t, i) for i in s["invest"]) or t["summary.none"]
        rows.append(
            [
                t[f"stage.name.{s['stage']}"],
                f"{s['gpus']:,}",
                _stage_numbers(t, s),
                stage_loss_text(t, s["loss"]),
                invest,
            ]
        )
    return {"columns": columns, "rows": rows}


def _failures(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    columns = [
        t["col.option"],
        t["col.mttf"],
        t["col.per_day"],
        t["col.expected"],
        t["col.ckpt_size"],
        t["col.ckpt_write"],
        t["col.interval"],
        t["col.restart"],
        t["col.goodput"],
        t["col.top_causes"],
    ]
    rows = []
    for o in data["options"]:
        r = o["reliability"]
        causes = sorted(r["interruptions_per_day_by_cause"].items(), key=lambda kv: -kv[1])
        top = ", ".join(f"{c} {v:.2f}" for c, v in causes[:TOP_CAUSES])
        rows.append(
            [
                o["name"],
                duration(t, r["mttf_s"]),
                f"{r['interruptions_per_day']:.2f}",
                f"{r['expected_interruptions']:,.0f}",
                bytes_text(r["checkpoint_bytes"]),
                duration(t, r["checkpoint_write_s"]),
                duration(t, r["interval_s"]),
                duration(t, r["restart_s"]),
                pct(r["goodput_frac"]),
                top,
            ]
        )
    return {"columns": columns, "rows": rows}


def _bom(t: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    columns = [
        t["col.option"],
        t["col.tier"],
        t["col.switches"],
        t["col.links"],
        t["col.medium"],
        t["col.transceivers"],
        t["col.cables"],
    ]
    rows = []
    for o in data["options"]:
        for tier in o["bom"]["tiers"]:
            cables = tier["fiber_cables"] + tier["dac_cables"]
            rows.append(
                [
                    f"{o['name']} ({money(o['bom']['network_capex_usd'])})",
                    tier["name"],
                    f"{tier['switches']:,}",
                    f"{tier['links']:,}",
                    tier["medium"],
                    f"{tier['transceivers']:,}",
                    f"{cables:,}",
                ]
            )
    return {"columns": columns, "rows": rows}


def knee_lines(t: dict[str, str], data: dict[str, Any]) -> list[str]:
    """Per option: the knee against the sweep's best per-GPU throughput, and the sizes whose
    best plan is memory-bound or does not fit."""
    lines = []
    for o in data["options"]:
        sweep = o["sweep"]
        ref = sweep["knee_vs_best"]
        if ref is None:
            continue
        base = {
            "name": o["name"],
            "best_gpus": f"{ref['best_gpus']:,}",
            "best_rate": f"{ref['best_tokens_per_s_per_gpu']:,.0f}",
            "threshold": pct(sweep["knee_threshold"]),
        }
        knee = ref["knee"]
        if knee is not None:
            lines.append(
                t["knee"].format(
                    **base,
                    gpus=f"{knee['gpus']:,}",
                    marginal=pct(knee["marginal_efficiency_frac"]),
                    cause=loss_name(t, knee["cause"]),
                )
            )
        else:
            lines.append(t["no_knee"].format(**base, max_gpus=f"{sweep['rows'][-1]['gpus']:,}"))
        bound = sweep["memory_bound_gpus"]
        if bound:
            lines.append(
                t["memory_bound"].format(
                    name=o["name"],
                    sizes=", ".join(f"{g:,}" for g in bound),
                    limit=pct(MEMORY_WARN_FRAC),
                )
            )
        for skip in sweep["skipped"]:
            lines.append(t["no_fit"].format(name=o["name"], gpus=f"{skip['gpus']:,}"))
    return lines


def band_basis(t: dict[str, str], band: dict[str, Any]) -> str:
    """Where a band comes from: the validation groups whose out-of-sample errors gave it, or
    the calibration."""
    if band["basis"] != "validation":
        return t["band.basis.calibrated"]
    groups = ", ".join(dict.fromkeys(str(r["group"]) for r in band["rows"]))
    return t["band.basis.validation"].format(group=groups)


def band_label(t: dict[str, str], option: dict[str, Any]) -> str:
    """The legend entry of an option's band: its level and its basis."""
    band = option["sweep"]["band"]
    return t["fig.band"].format(
        name=option["name"], level=pct(band["level"]), basis=band_basis(t, band)
    )


def band_lines(t: dict[str, str], data: dict[str, Any]) -> list[str]:
    """Per option with a band: from which size it is too wide to trust, and (validation basis)
    from which size it extrapolates beyond every validation run of its kind."""
    lines = []
    for o in data["options"]:
        band = o["sweep"].get("band")
        if not band or not band["rows"]:
            continue
        base = {
            "name": o["name"],
            "level": pct(band["level"]),
            "basis": band_basis(t, band),
            "width": pct(band["max_relative_width"]),
            "max_gpus": f"{band['rows'][-1]['gpus']:,}",
        }
        wide = band["too_wide_from_gpus"]
        if wide is None:
            lines.append(t["band.within"].format(**base))
        else:
            lines.append(t["band.too_wide"].format(**base, gpus=f"{wide:,}"))
        if band["basis"] != "validation":
            continue
        beyond = band["extrapolated_from_gpus"]
        if beyond is None:
            lines.append(t["band.inside_runs"].format(**base))
        else:
            lines.append(t["band.extrapolated"].format(**base, gpus=f"{beyond:,}"))
    return lines


def summary_lines(report: Report, lang: str = "en") -> list[str]:
    """The title, the headline verdict, each option in one line, the knees and the stages."""
    t = strings(lang)
    data = report.data
    tokens = count_text(data["scenario"]["token_budget"])
    lines = [t["title"].format(model=data["model"]["id"]), *verdict(t, data)]
    for o in data["options"]:
        lines.append(
            t["summary.option"].format(
                name=o["name"],
                plan=plan_text(o["best"]),
                mfu=pct(o["best"]["mfu"]),
                goodput=pct(o["reliability"]["goodput_frac"]),
                tokens=tokens,
                days=f"{o['training']['calendar_s'] / DAY_S:,.1f}",
                usd_mtok=money(o["cost"]["usd_per_million_tokens"]),
                capex=money(o["cost"]["capex_usd"]),
                train_usd=money(o["training"]["owned_usd"]),
            )
        )
    lines += knee_lines(t, data)
    lines += band_lines(t, data)
    for s in data["growth"]:
        invest = t["sep"].join(advice_text(t, i) for i in s["invest"])
        key = "summary.growth" if s["next_gpus"] else "summary.growth_last"
        lines.append(
            t[key].format(
                gpus=f"{s['gpus']:,}",
                dominant=loss_name(t, s["dominant"]),
                next=f"{s['next_gpus']:,}" if s["next_gpus"] else "",
                invest=invest or t["summary.none"],
            )
        )
    return lines


def content(report: Report, lang: str = "en") -> dict[str, Any]:
    """Everything the HTML page shows, as text in ``lang`` plus the numbers (``data``)."""
    t = strings(lang)
    data = report.data
    return {
        "schema": data["schema"],
        "lang": lang,
        "title": t["title"].format(model=data["model"]["id"]),
        "summary": summary_lines(report, lang),
        "verdict": verdict(t, data),
        "decision": data["decision"],
        "knees": knee_lines(t, data),
        "bands": band_lines(t, data),
        "comparison": _comparison(t, data),
        "growth": _growth(t, data),
        "stages": _stages(t, data),
        "failures": _failures(t, data),
        "bom": _bom(t, data),
        "data": data,
    }
