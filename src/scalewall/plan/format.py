"""One text for a parallel plan, shown the same way by the CLI, the report and the web app."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from scalewall.plan.plan import ParallelPlan

_SHORT_RECOMPUTE = {"none": "rc-none", "selective": "rc-sel", "full": "rc-full"}


def _fields(plan: ParallelPlan | Mapping[str, Any]) -> dict[str, Any]:
    """The plan's fields; a mapping (a ``--json`` plan object) is completed with the
    ``ParallelPlan`` defaults."""
    if isinstance(plan, ParallelPlan):
        return dataclasses.asdict(plan)
    defaults = dataclasses.asdict(ParallelPlan())
    return {**defaults, **{k: v for k, v in plan.items() if k in defaults}}


def format_plan(plan: ParallelPlan | Mapping[str, Any], *, short: bool = False) -> str:
    """The plan as one line: tp, pp, vpp, dp, cp (with its mode), ep, etp, micro-batch,
    recompute, ZeRO stage and precision, plus sequence parallelism when off (tp > 1), and the
    first and last stage layers, the offloaded layers and the local batch when set. ``short``
    (for tables) drops the widths equal to 1 other than tp, pp and dp; ep (when > 1) and the
    precision are in both forms."""
    f = _fields(plan)
    cp = int(f["cp"])
    if short:
        words = [f"tp{f['tp']}", f"pp{f['pp']}"]
        words += [f"vpp{f['vpp']}"] if int(f["vpp"]) > 1 else []
        words += [f"dp{f['dp']}"]
        words += [f"cp{cp}-{f['cp_mode']}"] if cp > 1 else []
        words += [f"ep{f['ep']}"] if int(f["ep"]) > 1 else []
        words += [f"etp{f['etp']}"] if int(f["etp"]) > 1 else []
        words += [f"mb{f['micro_batch']}", _SHORT_RECOMPUTE.get(f["recompute"], f["recompute"])]
        words += [f"z{f['zero']}"]
    else:
        words = [f"tp={f['tp']}", f"pp={f['pp']}", f"vpp={f['vpp']}", f"dp={f['dp']}"]
        words += [f"cp={cp}" + (f" ({f['cp_mode']})" if cp > 1 else "")]
        words += [f"ep={f['ep']}", f"etp={f['etp']}", f"mb={f['micro_batch']}"]
        words += [f"recompute={f['recompute']}", f"zero={f['zero']}"]
    if int(f["tp"]) > 1 and not f["sequence_parallel"]:
        words.append("sp-off" if short else "sp=off")
    first, last = int(f["first_stage_layers"]), int(f["last_stage_layers"])
    if first or last:
        words.append(f"{'st' if short else 'stages='}{first or '-'}/../{last or '-'}")
    offload = int(f.get("offload_layers") or 0)
    if offload:
        words.append(f"{'off' if short else 'offload='}{offload}")
    local = int(f.get("local_batch") or 0)
    if local:
        words.append(f"{'lb' if short else 'local_batch='}{local}")
    words.append(str(f["precision"]))
    return " ".join(words)


__all__ = ["format_plan"]


def modules_suffix(modules: Sequence[str]) -> str:
    """What follows a plan's text where it adds Megatron-Core recompute modules to its stack's
    selective recompute (``RankedPlan.recompute_modules``): ``" +moe_act+layernorm"``, or
    nothing."""
    return f" +{'+'.join(modules)}" if modules else ""
