"""Accuracy on the shipped runs as stated and re-stated the way a user states a run: MAPE and
the share within 20% of the first published metric of every case, dense and MoE apart, for the
fitted files and the held-out ones, and the cases that became errors.

A user names the framework's stack id without the recipe settings a source leaves out and
leaves open what the source does not say. ``--plain`` reduces every ``{"preset", "overrides"}``
stack to its id; ``--open f1,f2`` sets those plan fields to null (``--open-training`` the
training fields, ``--bare-hardware`` keeps only ``gpu`` and ``gpus``). nanotron's runs over 32
GPUs, whose network the source does not state, are left out as the held-out check leaves them.

    python benchmarks/restated_runs.py --plain
    python benchmarks/restated_runs.py --plain --open recompute,vpp,sequence_parallel
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from scalewall.validation.harness import validate_cases
from scalewall.validation.runs import held_out_runs_paths, read_runs_file, shipped_runs_paths

BOUND = 0.20
"""The issue's bound for a MoE run (``within20`` counts the cases inside it)."""
NANOTRON_NETWORK_GPUS = 32
"""nanotron runs above this many GPUs met a network the source does not state."""


def restate(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The case as a user would state it under ``args``."""
    case = copy.deepcopy(case)
    plan = case["plan"]
    if args.plain and isinstance(plan.get("stack"), dict):
        plan["stack"] = plan["stack"]["preset"]
    for name in args.open:
        if name in plan:
            plan[name] = None
    for name in args.open_training:
        if name in case["training"]:
            case["training"][name] = None
    if args.bare_hardware:
        case["hardware"] = {k: v for k, v in case["hardware"].items() if k in ("gpu", "gpus")}
    return case


def kept(case: dict[str, Any]) -> bool:
    gpus = int(case["hardware"].get("gpus") or 0)
    return not (case["id"].startswith("nanotron") and gpus > NANOTRON_NETWORK_GPUS)


def first_errors(path: Path, cases: list[dict[str, Any]]) -> tuple[dict[str, float], int, set[str]]:
    """Case id -> relative error of its first compared metric; error count; MoE case ids."""
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / path.name
        file.write_text(json.dumps({"format": "scalewall-runs/1", "cases": cases}))
        runs = read_runs_file(file)
    report = validate_cases(runs.cases, read_errors=runs.errors)
    first: dict[str, float] = {}
    for c in report.comparisons:
        first.setdefault(c.id, c.predicted / c.published - 1.0)
    moe = {c.id for c in runs.cases if c.model.routed_experts > 0}
    return first, len(report.errors), moe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plain", action="store_true", help="stack ids without overrides")
    parser.add_argument("--open", type=lambda s: [x for x in s.split(",") if x], default=[])
    parser.add_argument(
        "--open-training", type=lambda s: [x for x in s.split(",") if x], default=[]
    )
    parser.add_argument("--bare-hardware", action="store_true", help="keep only gpu and gpus")
    args = parser.parse_args()
    groups: dict[tuple[str, str, str], list[float]] = {}
    errors = {"stated": 0, "restated": 0}
    for label, paths in (("fitted", shipped_runs_paths()), ("held-out", held_out_runs_paths())):
        for path in paths:
            cases = [c for c in json.loads(path.read_text())["cases"] if kept(c)]
            for version, variant in (
                ("stated", cases),
                ("restated", [restate(c, args) for c in cases]),
            ):
                first, count, moe = first_errors(path, variant)
                errors[version] += count
                for case_id, error in first.items():
                    kind = "moe" if case_id in moe else "dense"
                    groups.setdefault((label, kind, version), []).append(error)
    print(
        f"restated: plain={args.plain} open={args.open} open_training={args.open_training} "
        f"bare_hardware={args.bare_hardware}"
    )
    for label in ("fitted", "held-out"):
        for kind in ("dense", "moe"):
            cells = []
            for version in ("stated", "restated"):
                a = np.abs(groups.get((label, kind, version), []))
                inside = int((a <= BOUND).sum())
                cells.append(f"{version} MAPE {a.mean():6.1%} within 20% {inside:3d}/{a.size}")
            print(f"{label:8s} {kind:5s}  " + "   ".join(cells))
    print(f"errors: stated {errors['stated']}, restated {errors['restated']}")


if __name__ == "__main__":
    main()
