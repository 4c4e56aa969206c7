"""Calibrate the step model to a cluster: fit its named constants to measurements, with
uncertainty, and predict with prediction intervals.

``collect`` reads probe files, nccl-tests logs and ``scalewall-runs/1`` files into observations;
``fit`` runs bounded least squares on log errors and says which constants the data could not
pin; ``Calibration`` is the profile ``--calibration FILE`` loads (``read_profile``,
``write_profile``); ``step_interval`` gives a prediction with its interval.
"""

from __future__ import annotations

from scalewall.calibrate.fit import FitResult, Residual, fit, summary
from scalewall.calibrate.inputs import collect
from scalewall.calibrate.interval import (
    DEFAULT_DRAWS,
    DEFAULT_LEVEL,
    Interval,
    coverage,
    step_interval,
)
from scalewall.calibrate.observations import Collected, Observations, from_cases, from_measurements
from scalewall.calibrate.parameters import PARAMETERS, Parameter
from scalewall.calibrate.profile import FORMAT, Calibration, read_profile, write_profile

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_LEVEL",
    "FORMAT",
    "PARAMETERS",
    "Calibration",
    "Collected",
    "FitResult",
    "Interval",
    "Observations",
    "Parameter",
    "Residual",
    "collect",
    "coverage",
    "fit",
    "from_cases",
    "from_measurements",
    "read_profile",
    "step_interval",
    "summary",
    "write_profile",
]
