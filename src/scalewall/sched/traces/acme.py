"""Shanghai AI Lab Acme job log reader (``trace_seren.csv``, ``trace_kalos.csv``).

Hu et al., "Characterization of Large Language Model Development in the Datacenter", NSDI'24
(InternLM/AcmeTrace). Columns used: ``job_id, user, gpu_num, cpu_num, state, submit_time,
start_time, end_time``; the tenant is the ``user`` (Acme publishes no virtual clusters).
"""

from __future__ import annotations

from pathlib import Path

from scalewall.sched.traces._common import TraceRead
from scalewall.sched.traces._jobs_csv import read_job_log


def read_acme(path: Path, *, skip_bad_rows: bool = False) -> TraceRead:
    """Jobs of an Acme ``trace_seren.csv`` / ``trace_kalos.csv``."""
    return read_job_log(path, tenant_column="user", skip_bad_rows=skip_bad_rows)
