"""The shipped constants as a fit over published runs, and its leave-one-source-out error.

``fit_published`` fits the constants the published step times and throughputs determine
(``FITTED`` and each accelerator's ``training_clock_frac``) with the calibrate machinery: the
MAP fit on log errors with a normal prior at the shipped value of each
(``calibrate.fit``), every one of them fitted (no selection: the prior holds a constant the
runs do not inform). Constants that microbenchmarks or datasheets determine stay at their
defaults (``FIXED``, with the reason).

``cross_validate`` refits without each source group (``Case.group``) and predicts the group
from that fit: the out-of-sample error a user should expect on runs not in the repository. The
in-sample error is that of the fit on every group.

The prior centres are the shipped defaults, which were once set by hand on these same runs:
a constant the other groups do not inform (the Blackwell clocks when the frontier group is
held out) stays at a value that saw the held-out group. The out-of-sample figure is honest
about the fit, not about that history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from scalewall.calibrate.fit import FitResult, fit
from scalewall.calibrate.observations import from_cases, step_metric
from scalewall.calibrate.parameters import CLOCK_PREFIX, PARAMETERS, apply, clock_name
from scalewall.calibrate.profile import software_provenance
from scalewall.errors import SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.validation.error_bars import ErrorGroup, generation
from scalewall.validation.harness import ValidationReport, validate_cases
from scalewall.validation.runs import (
    Case,
)

FITTED = (
    "gemm_sustained_ratio",
    "dp_overlap_efficiency",
    "host_op_s",
    "overlap_compute_slowdown_frac",
    "tp_overlap_compute_slowdown_frac",
    "expert_alltoall_bw_efficiency",
    "expert_dispatch_copy_s",
    "fp4_gemm_ceiling_ratio",
)
"""Efficiency fields whose value only whole training steps determine."""
CLOCK_REFERENCE = ("a100-sxm-80gb", "a100-sxm-40gb")
"""Accelerators whose sustained clock is 1 by definition: ``gemm_sustained_ratio`` is the GEMM
rate inside a step over the microbenchmark ceiling on them, so fitting their clock as well
would leave the two apart only by the prior."""
FIXED: dict[str, str] = {
    "gemm_k_half_efficiency": "GEMM microbenchmarks (shape sweep) determine it",
    "gemm_k_half_fp8_factor": "FP8 GEMM microbenchmarks (shape sweep) determine it",
    "gemm_launch_s": "GEMM microbenchmarks (small shapes) determine it",
    "hbm_efficiency": "STREAM-like copy microbenchmarks determine it",
    "unfused_attention_bytes_per_score": "counted from the kernels' reads and writes",
    "attention_dropout_bytes_per_score": "counted from the kernels' reads and writes",
    "dropout_bytes_per_hidden": "counted from the kernels' reads and writes",
    "flash_attention_frac": "attention kernel benchmarks (FlashAttention-2/3) determine it",
    "scale_up_bw_efficiency": "nccl-tests bus bandwidth determines it",
    "scale_up_nvls_algbw_efficiency": "nccl-tests NVLS bandwidth determines it",
    "scale_out_bw_efficiency": "nccl-tests bus bandwidth determines it",
    "collective_launch_s": "small-message nccl-tests determine it",
    "ring_step_latency_scale_up_s": "NCCL's tuning model and nccl-tests latency determine it",
    "ring_step_latency_scale_out_s": "NCCL's tuning model and nccl-tests latency determine it",
    "pp_p2p_overlap_frac": "a stack behaviour, not fitted on step times",
    "pp_p2p_sync_s": "p2p microbenchmarks determine it; the runs hold too few pipelines",
    "rank_jitter_cv": "bounded by the ByteDance straggler study, not by step times",
    "rank_noise_duty_frac": "set by per-GPU scaling within the FSDP series, which the "
    "step-time levels cannot show past the full-recompute FSDP rows' level error",
    "rank_noise_event_s": "a stall length the step times hardly inform (they trade it "
    "for a fixed cost per synchronisation); host traces would determine it",
}
"""Candidate constants kept at their defaults in the shipped fit, and why."""
FIXED_CLOCKS: dict[str, str] = {
    "b300": "its only runs are four Megatron-Bridge MoE rows whose model errors (gpt-oss-120b "
    "+62%, Qwen3-235B-A22B +9%, Qwen3-30B-A3B -6%, DeepSeek-V3 -11%) set their level more than "
    "the clock: fitted, it follows its prior (0.72 +- 0.045 from 0.73), so it stays near B200's "
    "fitted clock on the same board",
}
"""Accelerators the runs are on whose sustained clock the shipped fit keeps at the catalog's
value, and why."""
FIT_TOL = 1e-5
"""Relative tolerance of the published fit: far below the constants' standard errors (1-10%),
and each solver iteration is a pass over every run."""
ProgressFn = Callable[[str], None]


def shipped_profile_path() -> Path:
    """The profile ``scalewall fit`` wrote over the shipped runs (the shipped defaults)."""
    return Path(str(resources.files("scalewall.calibrate") / "data" / "defaults.toml"))


def _shown_path(path: Path) -> str:
    """A path inside the package as ``scalewall/...`` (the same on every machine)."""
    root = Path(str(resources.files("scalewall"))).resolve()
    try:
        return str(Path("scalewall") / path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def provenance(paths: Sequence[Path], cases: Sequence[Case]) -> dict[str, Any]:
    """Versions, the command and each input's path, sha256 and number of runs."""
    inputs = [
        {
            "path": _shown_path(p),
            "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
            "kind": "runs",
        }
        for p in paths
    ]
    return {
        **software_provenance(),
        "cases": len(cases),
        "inputs": inputs,
        "fixed": {**FIXED, **{clock_name(a): why for a, why in FIXED_CLOCKS.items()}},
    }


def published_params(cases: Sequence[Case]) -> tuple[str, ...]:
    """``FITTED`` and the clock of every accelerator the cases ran on but the reference and
    ``FIXED_CLOCKS``."""
    accs = sorted(
        {str(c.hardware["gpu"]) for c in cases} - set(CLOCK_REFERENCE) - set(FIXED_CLOCKS)
    )
    return (*FITTED, *(clock_name(a) for a in accs))


def fit_published(cases: Sequence[Case], base: Efficiency | None = None) -> FitResult:
    """The MAP fit of ``published_params`` to the cases' published step metric."""
    base = base or Efficiency()
    collected = from_cases(cases, "published runs", base)
    return fit(
        collected,
        params=published_params(cases),
        base=base,
        select_by_validation=False,
        tol=FIT_TOL,
    )


def fitted_efficiency(values: Mapping[str, float], base: Efficiency | None = None) -> Efficiency:
    """``base`` with the fitted Efficiency fields of ``values`` put in."""
    eff, _ = apply(values, base or Efficiency())
    return eff


def fitted_clocks(values: Mapping[str, float]) -> dict[str, float]:
    """Accelerator id -> fitted ``training_clock_frac``."""
    return {
        k.removeprefix(CLOCK_PREFIX): v for k, v in values.items() if k.startswith(CLOCK_PREFIX)
    }


@dataclass(frozen=True, kw_only=True)
class Fold:
    """One held-out group: the fit that never saw it, and its predictions from that fit."""

    group: str
    fit: FitResult
    report: ValidationReport

    @property
    def fit_case_ids(self) -> tuple[str, ...]:
        """The cases whose published values entered the fit."""
        return tuple(r.label for r in self.fit.residuals)


@dataclass(frozen=True, kw_only=True)
class CrossValidation:
    """In-sample (fit on every group), out-of-sample (fit without the group) and shipped-default
    errors of every held-out group."""

    full_fit: FitResult
    in_sample: ValidationReport
    defaults: ValidationReport
    folds: tuple[Fold, ...]

    def groups(self) -> dict[str, dict[str, float]]:
        """Per held-out group: metrics compared and MAPE in sample, out of sample and with the
        shipped defaults (time and throughput metrics, as ``ValidationReport.groups``)."""
        ins, dflt = self.in_sample.groups(), self.defaults.groups()
        out: dict[str, dict[str, float]] = {}
        for fold in self.folds:
            oos = fold.report.groups().get(fold.group)
            if oos is None:
                continue
            out[fold.group] = {
                "metrics": oos["metrics"],
                "in_sample_mape": ins[fold.group]["mape"],
                "out_of_sample_mape": oos["mape"],
                "defaults_mape": dflt[fold.group]["mape"],
                "out_of_sample_max_abs_error": oos["max_abs_error"],
            }
        return out

    def overall(self) -> dict[str, float]:
        """MAPE over every compared metric of the held-out groups (metric-weighted)."""
        held = {f.group for f in self.folds}
        oos = [abs(c.error_frac) for f in self.folds for c in _timed(f.report, {f.group})]
        return {
            "metrics": float(len(oos)),
            "in_sample_mape": _mape(_timed(self.in_sample, held)),
            "out_of_sample_mape": float(np.mean(oos)) if oos else float("nan"),
            "defaults_mape": _mape(_timed(self.defaults, held)),
        }

    def out_of_sample_log_errors(self) -> dict[str, list[float]]:
        """Per group, log(predicted / published) of every time or throughput metric out of
        sample: what an uncalibrated estimate's interval is drawn from."""
        return {
            f.group: [float(np.log(c.predicted / c.published)) for c in _timed(f.report, {f.group})]
            for f in self.folds
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "groups": self.groups(),
            "overall": self.overall(),
            "fitted": {n: self.full_fit.values[n] for n in self.full_fit.names},
            "folds": {
                f.group: {
                    "fitted": dict(f.fit.values),
                    "fit_cases": len(f.fit_case_ids),
                }
                for f in self.folds
            },
        }


def out_of_sample_groups(cv: CrossValidation, cases: Sequence[Case]) -> dict[str, ErrorGroup]:
    """Per held-out group, the step-time log errors of its runs out of sample (a run's first
    published step metric; a rate's error is the step time's with the sign turned) and what
    its runs were: what ``validation.error_bars`` draws uncalibrated intervals from."""
    by_id = {c.id: c for c in cases}
    out = {}
    for fold in cv.folds:
        members = [c for c in cases if c.group == fold.group]
        errors = []
        for comp in fold.report.comparisons:
            metric = step_metric(by_id[comp.id])
            if comp.metric != metric:
                continue
            log_error = float(np.log(comp.predicted / comp.published))
            errors.append(log_error if metric == "step_time_s" else -log_error)
        gpus = [int(c.hardware["gpus"]) for c in members]
        out[fold.group] = ErrorGroup(
            name=fold.group,
            stacks=tuple(sorted({c.stack.id.split("+", 1)[0] for c in members})),
            generations=tuple(sorted({generation(str(c.hardware["gpu"])) for c in members})),
            moe=tuple(sorted({c.model.routed_experts > 0 for c in members})),
            gpus_min=min(gpus),
            gpus_max=max(gpus),
            step_log_errors=tuple(errors),
        )
    return out


def _timed(report: ValidationReport, groups: set[str]) -> list[Any]:
    return [c for c in report.comparisons if c.group in groups and not c.metric.startswith("mem")]


def _mape(comparisons: Sequence[Any]) -> float:
    errors = [abs(c.error_frac) for c in comparisons]
    return float(np.mean(errors)) if errors else float("nan")


def validate_fitted(
    cases: Sequence[Case], result: FitResult, base: Efficiency | None = None
) -> ValidationReport:
    """Every case predicted with the fitted constants and clocks."""
    eff = fitted_efficiency(result.values, base)
    return validate_cases(cases, eff, clocks=fitted_clocks(result.values))


def cross_validate(
    cases: Sequence[Case],
    *,
    holdout: Sequence[str] | None = None,
    base: Efficiency | None = None,
    progress: ProgressFn | None = None,
) -> CrossValidation:
    """Leave each group of ``holdout`` (default: every ``Case.group``) out, refit on the others
    and predict it. A group name that no case has raises ``SpecError``."""
    base = base or Efficiency()
    names = sorted({c.group for c in cases})
    chosen = list(holdout) if holdout else names
    for g in chosen:
        if g not in names:
            raise SpecError("--holdout", g, f"a group of the cases: {', '.join(names)}")
    step = progress or (lambda _: None)
    step("fit on every group")
    full = fit_published(cases, base)
    in_sample = validate_fitted(cases, full, base)
    defaults = validate_cases(cases, base)
    folds = []
    for g in chosen:
        step(f"fit without {g}")
        train = [c for c in cases if c.group != g]
        result = fit_published(train, base)
        held = [c for c in cases if c.group == g]
        folds.append(Fold(group=g, fit=result, report=validate_fitted(held, result, base)))
    return CrossValidation(
        full_fit=full, in_sample=in_sample, defaults=defaults, folds=tuple(folds)
    )


assert set(FIXED).isdisjoint(FITTED) and set(FIXED) | set(FITTED) <= set(PARAMETERS)
