"""Measure a real cluster: GEMM, attention, device memory and collectives, into a file.

``run_probe`` needs PyTorch (the ``probe`` extra) and imports it only when called. Reading and
writing measurements files and importing nccl-tests logs need nothing beyond the core package.
"""

from __future__ import annotations

from pathlib import Path

from scalewall.probe.busbw import COLLECTIVE_KINDS, bus_bandwidth_factor
from scalewall.probe.config import PARTS, ProbeConfig, cpu_config, quick_config
from scalewall.probe.measurements import (
    FORMAT,
    Machine,
    Measurements,
    Record,
    Versions,
    merge_measurements,
    read_measurements,
    write_measurements,
)
from scalewall.probe.nccl_tests import parse_nccl_tests, read_nccl_tests
from scalewall.probe.runner import Progress, run_probe
from scalewall.probe.runtime import INSTALL_HINT, ProbeUnavailable

__all__ = [
    "COLLECTIVE_KINDS",
    "FORMAT",
    "INSTALL_HINT",
    "PARTS",
    "Machine",
    "Measurements",
    "ProbeConfig",
    "ProbeUnavailable",
    "Progress",
    "Record",
    "Versions",
    "bus_bandwidth_factor",
    "cpu_config",
    "load_measurements",
    "merge_measurements",
    "parse_nccl_tests",
    "quick_config",
    "read_measurements",
    "read_nccl_tests",
    "run_probe",
    "write_measurements",
]


def load_measurements(path: str | Path) -> Measurements:
    """A measurements file or an nccl-tests log, told apart by the first non-blank character.

    A measurements file starts with ``{`` (its JSON header); anything else is read as nccl-tests
    output. This is the reader for tools that accept both (``scalewall calibrate``).
    """
    p = Path(path)
    try:
        with p.open("rb") as fh:
            head = fh.read(4096).lstrip()
    except OSError:
        return read_measurements(p)  # let the reader report the error in its own words
    if head.startswith(b"{"):
        return read_measurements(p)
    return read_nccl_tests(p)
