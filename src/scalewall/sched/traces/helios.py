"""SenseTime Helios job log reader (``cluster_log.csv``).

Hu et al., "Characterization and Prediction of Deep Learning Workloads in Large-Scale GPU
Datacenters", SC'21 (S-Lab-System-Group/HeliosData). Columns used: ``job_id, user, vc, gpu_num,
cpu_num, state, submit_time, start_time, end_time``; the tenant is the virtual cluster ``vc``.
"""

from __future__ import annotations

from pathlib import Path

from scalewall.sched.traces._common import TraceRead
from scalewall.sched.traces._jobs_csv import read_job_log


def read_helios(path: Path, *, skip_bad_rows: bool = False) -> TraceRead:
    """Jobs of a Helios ``cluster_log.csv``."""
    return read_job_log(path, tenant_column="vc", skip_bad_rows=skip_bad_rows)
