"""The calibration profile: fitted constants, their covariance and provenance, as TOML.

Format ``scalewall-calibration/1`` (documented in ``docs/calibration.md``)::

    format = "scalewall-calibration/1"
    created_utc = "2026-01-31T12:00:00Z"
    accelerator = "h100-sxm-80gb"        # whose clock a fitted training_clock_frac is
    [efficiency]                          # fitted Efficiency fields (the rest keep defaults)
    gemm_sustained_ratio = 0.93
    [accelerator_fit]                     # present when the clock was fitted
    training_clock_frac = 0.81
    [uncertainty]
    parameters = ["gemm_sustained_ratio", ...]      # order of the covariance rows
    standard_errors = [0.012, ...]
    covariance = [[1.4e-4, ...], ...]
    residual_log_sd = {step = 0.05, gemm = 0.02}    # model error per kind (log units)
    step_residuals_log = [0.01, -0.03, ...]         # fitted step-time log errors
    [not_identifiable]                    # kept at defaults -> why
    rank_jitter_cv = "standard error larger than its typical size"
    [provenance]
    scalewall = "0.1.0"  python = "3.11.7"  numpy = "..."  scipy = "..."
    command = "scalewall calibrate ..."
    inputs = [{path = "m.jsonl", sha256 = "...", kind = "measurements", records = 120}]
"""

from __future__ import annotations

import json
import math
import platform
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scalewall.calibrate.fit import FitResult
from scalewall.calibrate.parameters import (
    CLOCK,
    CLOCK_PREFIX,
    apply,
    clock_name,
    is_clock,
    parameter,
)
from scalewall.errors import ScalewallError, SpecError
from scalewall.perf.assumptions import Efficiency
from scalewall.plan.topology import Cluster

FloatArray = NDArray[np.float64]
FORMAT = "scalewall-calibration/1"


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """A fitted calibration: what ``--calibration FILE`` loads."""

    values: dict[str, float]
    """Fitted parameters (Efficiency fields, and ``training_clock_frac``)."""
    covariance: FloatArray
    """Rows and columns in the order of ``values``."""
    spread_names: tuple[str, ...] = ()
    """Parameters the prediction interval samples: the fitted ones and the candidates kept at
    their defaults (whose uncertainty the data could not reduce)."""
    spread_center: dict[str, float] = field(default_factory=dict)
    spread_covariance: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    residual_log_sd: dict[str, float] = field(default_factory=dict)
    step_residuals_log: tuple[float, ...] = ()
    not_identifiable: dict[str, str] = field(default_factory=dict)
    accelerator: str = ""
    created_utc: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.values)

    @property
    def standard_errors(self) -> dict[str, float]:
        if not self.values:
            return {}
        diag = np.sqrt(np.maximum(np.diag(self.covariance), 0.0))
        return {n: float(v) for n, v in zip(self.values, diag, strict=True)}

    def efficiency(self, base: Efficiency | None = None) -> Efficiency:
        """``base`` (default: the defaults) with the fitted Efficiency fields put in."""
        eff, _ = apply(
            {k: v for k, v in self.values.items() if not is_clock(k)}, base or Efficiency()
        )
        return eff

    def clocks(self) -> dict[str, float]:
        """Accelerator id -> fitted ``training_clock_frac`` (what ``predict_case`` takes)."""
        out = {k.removeprefix(CLOCK_PREFIX): v for k, v in self.values.items() if is_clock(k)}
        if CLOCK in out:
            value = out.pop(CLOCK)
            if self.accelerator:
                out[self.accelerator] = value
        return out

    def apply_cluster(self, cluster: Cluster) -> Cluster:
        """``cluster`` with the fitted clock, when one was fitted for its accelerator (the
        profile's ``accelerator``, or a ``training_clock_frac:<id>`` value)."""
        acc = cluster.accelerator.id
        if CLOCK in self.values and acc == self.accelerator:
            clock = self.values[CLOCK]
        elif clock_name(acc) in self.values:
            clock = self.values[clock_name(acc)]
        else:
            return cluster
        _, out = apply({CLOCK: clock}, Efficiency(), cluster)
        assert out is not None
        return out

    @classmethod
    def from_fit(
        cls, result: FitResult, *, created_utc: str, provenance: Mapping[str, Any]
    ) -> Calibration:
        steps = tuple(r.fitted_log_error for r in result.residuals if r.kind == "step")
        return cls(
            values=dict(result.values),
            covariance=np.asarray(result.covariance, dtype=np.float64),
            spread_names=result.spread_names,
            spread_center={
                n: result.values.get(n, result.defaults[n]) for n in result.spread_names
            },
            spread_covariance=np.asarray(result.spread_covariance, dtype=np.float64),
            residual_log_sd=dict(result.residual_log_sd),
            step_residuals_log=steps,
            not_identifiable=dict(result.not_identifiable),
            accelerator=result.accelerator if CLOCK in result.values else "",
            created_utc=created_utc,
            provenance=dict(provenance),
        )


# ---------------------------------------------------------------- TOML writing


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"non-finite number {v} cannot be written")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def _table(name: str, items: Mapping[str, Any]) -> list[str]:
    return ["", f"[{name}]", *(f"{_key(k)} = {_value(v)}" for k, v in items.items())]


def profile_text(cal: Calibration) -> str:
    """The profile as TOML text."""
    eff = {k: v for k, v in cal.values.items() if not is_clock(k)}
    clocks = {k: v for k, v in cal.values.items() if is_clock(k)}
    lines = [
        f"# scalewall calibration profile ({FORMAT}); see docs/calibration.md",
        f"format = {_value(FORMAT)}",
        f"created_utc = {_value(cal.created_utc)}",
        f"accelerator = {_value(cal.accelerator)}",
        *_table("efficiency", eff),
    ]
    if clocks:
        lines += _table("accelerator_fit", clocks)
    lines += _table(
        "uncertainty",
        {
            "parameters": list(cal.values),
            "standard_errors": list(cal.standard_errors.values()),
            "covariance": [[float(x) for x in row] for row in cal.covariance],
            "spread_parameters": list(cal.spread_names),
            "spread_center": [cal.spread_center[n] for n in cal.spread_names],
            "spread_covariance": [[float(x) for x in row] for row in cal.spread_covariance],
            "residual_log_sd": cal.residual_log_sd,
            "step_residuals_log": list(cal.step_residuals_log),
        },
    )
    lines += _table("not_identifiable", cal.not_identifiable)
    lines += _table("provenance", cal.provenance)
    return "\n".join(lines) + "\n"


def write_profile(cal: Calibration, path: str | Path) -> Path:
    p = Path(path)
    try:
        p.write_text(profile_text(cal), encoding="utf-8")
    except OSError as exc:
        raise ScalewallError(f"{p}: cannot write: {exc.strerror}") from None
    return p


# ---------------------------------------------------------------- TOML reading


def _floats(data: Any, name: str, where: str) -> list[float]:
    if not isinstance(data, list) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in data
    ):
        raise SpecError(name, data, "a list of numbers", where=where)
    return [float(x) for x in data]


def read_profile(path: str | Path) -> Calibration:
    """Read a calibration profile; a defect raises a one-line error naming the file."""
    p = Path(path)
    where = str(p)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScalewallError(f"{p}: cannot read: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ScalewallError(f"{p}: not a valid TOML calibration profile: {exc}") from None
    if data.get("format") != FORMAT:
        raise SpecError("format", data.get("format"), f"expected {FORMAT!r}", where=where)
    eff_fields = set(Efficiency.field_names())
    values: dict[str, float] = {}
    for key, value in {**data.get("efficiency", {}), **data.get("accelerator_fit", {})}.items():
        if key not in eff_fields and not is_clock(key):
            raise SpecError(key, value, "not an Efficiency field", where=f"{where}: [efficiency]")
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise SpecError(key, value, "a number", where=f"{where}: [efficiency]")
        values[key] = float(value)
    unc = data.get("uncertainty", {})
    names = unc.get("parameters", list(values))
    if isinstance(names, list) and sorted(map(str, names)) == sorted(values):
        values = {str(n): values[str(n)] for n in names}  # the covariance's order
    if names != list(values):
        raise SpecError(
            "uncertainty.parameters",
            names,
            f"the fitted names in order: {list(values)}",
            where=where,
        )
    rows = unc.get("covariance", [])
    cov = np.array([_floats(r, "uncertainty.covariance", where) for r in rows], dtype=np.float64)
    if cov.size == 0:
        cov = np.zeros((len(values), len(values)))
    if cov.shape != (len(values), len(values)):
        raise SpecError(
            "uncertainty.covariance",
            f"shape {cov.shape}",
            f"a {len(values)} x {len(values)} matrix",
            where=where,
        )
    sd = {str(k): float(v) for k, v in dict(unc.get("residual_log_sd", {})).items()}
    spread_names = tuple(str(n) for n in unc.get("spread_parameters", []))
    for n in spread_names:
        if not _known(n):
            raise SpecError("uncertainty.spread_parameters", n, "fittable names", where=where)
    center = _floats(unc.get("spread_center", []), "uncertainty.spread_center", where)
    spread = np.array(
        [
            _floats(r, "uncertainty.spread_covariance", where)
            for r in unc.get("spread_covariance", [])
        ],
        dtype=np.float64,
    ).reshape(len(spread_names), len(spread_names))
    if len(center) != len(spread_names):
        raise SpecError(
            "uncertainty.spread_center", center, f"{len(spread_names)} numbers", where=where
        )
    return Calibration(
        values=values,
        covariance=cov,
        spread_names=spread_names,
        spread_center=dict(zip(spread_names, center, strict=True)),
        spread_covariance=spread,
        residual_log_sd=sd,
        step_residuals_log=tuple(
            _floats(unc.get("step_residuals_log", []), "step_residuals_log", where)
        ),
        not_identifiable={str(k): str(v) for k, v in data.get("not_identifiable", {}).items()},
        accelerator=str(data.get("accelerator", "")),
        created_utc=str(data.get("created_utc", "")),
        provenance=dict(data.get("provenance", {})),
    )


def bounds(names: tuple[str, ...]) -> tuple[FloatArray, FloatArray]:
    lower = np.array([parameter(n).lower if _known(n) else -np.inf for n in names])
    upper = np.array([parameter(n).upper if _known(n) else np.inf for n in names])
    return lower, upper


def _known(name: str) -> bool:
    try:
        parameter(name)
    except KeyError:
        return False
    return True


def software_provenance() -> dict[str, str]:
    """The versions a profile was fitted with and the command that fitted it."""
    from importlib.metadata import version

    import scipy

    return {
        "scalewall": version("scalewall"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "command": " ".join(["scalewall", *sys.argv[1:]]) if sys.argv else "",
    }
