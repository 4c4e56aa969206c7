"""Read calibration inputs: measurements files, nccl-tests logs and ``scalewall-runs/1`` files."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scalewall.calibrate.observations import Collected, from_cases, from_measurements, merge
from scalewall.catalog.schema import Accelerator
from scalewall.errors import ScalewallError
from scalewall.perf.assumptions import Efficiency
from scalewall.plan.topology import Cluster
from scalewall.probe import load_measurements
from scalewall.validation.runs import FORMAT as RUNS_FORMAT
from scalewall.validation.runs import read_runs


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ScalewallError(f"{path}: cannot read: {exc.strerror}") from None


def is_runs_file(path: Path) -> bool:
    """A ``scalewall-runs/1`` file names its format near the top."""
    try:
        with path.open("rb") as fh:
            return RUNS_FORMAT.encode() in fh.read(4096)
    except OSError:
        return False


def collect(
    paths: Sequence[str | Path],
    *,
    accelerator: Accelerator | None = None,
    cluster: Cluster | None = None,
    max_gpus: int | None = None,
    base: Efficiency | None = None,
) -> Collected:
    """Observation sets from every input, with provenance per file.

    Runs files contribute the published step metric of each case (cases on more than
    ``max_gpus`` GPUs left out); the others are read as measurements or nccl-tests logs.
    A malformed file raises a one-line error naming the file (and line).
    """
    base = base or Efficiency()
    parts: list[Collected] = []
    for raw in paths:
        path = Path(raw)
        source: dict[str, Any] = {"path": str(path), "sha256": _sha256(path)}
        if is_runs_file(path):
            cases = read_runs(path)
            if max_gpus is not None:
                cases = [c for c in cases if int(c.hardware["gpus"]) <= max_gpus]
            got = from_cases(cases, path.name, base)
            source.update(kind="runs", cases=len(cases))
        else:
            m = load_measurements(path)
            got = from_measurements(m, path.name, accelerator=accelerator, cluster=cluster)
            source.update(
                kind=m.source,
                records=len(m.records),
                created_utc=m.created_utc,
                device=m.machine.device_name,
                world_size=m.machine.world_size,
                versions={k: v for k, v in vars(m.versions).items() if v},
            )
        parts.append(Collected(sets=got.sets, notes=got.notes, sources=(source,)))
    return merge(parts)
