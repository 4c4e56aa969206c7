"""Synthetic LLM-cluster workload whose statistics follow the Acme Seren/Kalos summary.

Source of the targets: ``data/acme/acme_cluster_summary.csv`` (Hu et al., NSDI'24). Per GPU job:
- GPUs per job: 1 with probability ``p_single``, else 2^k GPUs (k = 1..log2(max_gpu)) with
  P proportional to r^k; r is solved so the mean equals ``avg_gpu_num``. The median is then 1,
  as in both traces.
- Run time: log-normal with the trace's median; its sigma is solved so that the mean, after
  capping at the trace's maximum, equals ``avg_run_time_gpu``.
- Outcome: completed / canceled / failed with the trace's GPU-job rates *and* its shares of GPU
  time by outcome (the run time drawn is the time the job actually ran). Outcome o is drawn
  with P(o | g) proportional to exp(a_o + b_o ln g), g the job's GPU-seconds, completed the
  reference (a = b = 0); the four other numbers are solved on the drawn jobs so that the count
  shares and the GPU-time shares both match (on Seren canceled jobs hold 66% of GPU time and
  failed ones 12%, though 43% of jobs fail: failures come early, cancels late).
  Outcomes are drawn with stratified uniforms over jobs in GPU-seconds order (blocks of
  ``OUTCOME_BLOCK`` jobs of similar size share one Latin-hypercube draw), so the realised shares
  stay near the expected ones even though a few jobs of 1,024 GPUs for days carry much of the
  GPU time.
- CPU-only jobs: the trace's share of jobs (``cpu_job_num / job_num``: 36% on Seren, 68% on
  Kalos), log-normal run times with the trace's CPU-job median and mean, capped at the GPU
  jobs' maximum (the summary gives no CPU maximum), and the CPU jobs' outcome rates; they hold
  no GPU, so the GPU-time shares are the GPU jobs' alone.
- Arrivals: Poisson, ``num_jobs`` (GPU and CPU jobs together) over ``span_s``.
Queueing delay is an output of the simulated scheduler, not an input; compare it, don't fit it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, special

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI

SUMMARY_PATH = Path(__file__).resolve().parent / "data" / "acme" / "acme_cluster_summary.csv"
DAY_S = 86_400.0


@dataclass(frozen=True, kw_only=True)
class AcmeTargets:
    """The figures of one Acme cluster that the generator matches."""

    name: str
    avg_gpu_num: float
    max_gpu: int
    avg_run_time_s: float
    med_run_time_s: float
    max_run_time_s: float
    complete_rate: float
    cancel_rate: float
    fail_rate: float
    complete_time_share: float
    """Share of GPU time in completed jobs (``complete_rate_gpu_time``)."""
    cancel_time_share: float
    fail_time_share: float
    cpu_job_frac: float
    """Share of all jobs that ask for no GPU (``cpu_job_num / job_num``)."""
    cpu_avg_run_time_s: float
    cpu_med_run_time_s: float
    cpu_complete_rate: float
    cpu_cancel_rate: float
    cpu_fail_rate: float


def acme_targets(cluster: str) -> AcmeTargets:
    """Targets for ``Seren`` or ``Kalos`` from the shipped summary file."""
    table = pd.read_csv(SUMMARY_PATH).set_index("id")
    if cluster not in table.index:
        raise SpecError("cluster", cluster, f"valid: {', '.join(table.index)}")
    row: dict[str, float] = {str(k): float(v) for k, v in table.loc[cluster].to_dict().items()}
    return AcmeTargets(
        name=cluster,
        avg_gpu_num=float(row["avg_gpu_num"]),
        max_gpu=int(row["max_gpu"]),
        avg_run_time_s=float(row["avg_run_time_gpu"]),
        med_run_time_s=float(row["med_run_time_gpu"]),
        max_run_time_s=float(row["max_run_time_gpu"]),
        complete_rate=float(row["complete_rate_gpu"]),
        cancel_rate=float(row["cancel_rate_gpu"]),
        fail_rate=float(row["fail_rate_gpu"]),
        complete_time_share=float(row["complete_rate_gpu_time"]),
        cancel_time_share=float(row["cancel_rate_gpu_time"]),
        fail_time_share=float(row["fail_rate_gpu_time"]),
        cpu_job_frac=float(row["cpu_job_num"]) / float(row["job_num"]),
        cpu_avg_run_time_s=float(row["avg_run_time_cpu"]),
        cpu_med_run_time_s=float(row["med_run_time_cpu"]),
        cpu_complete_rate=float(row["complete_rate_cpu"]),
        cpu_cancel_rate=float(row["cancel_rate_cpu"]),
        cpu_fail_rate=float(row["fail_rate_cpu"]),
    )


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec:
    """A synthetic workload."""

    num_jobs: int
    span_s: float = 30 * DAY_S
    """Arrivals are spread over this window (Poisson)."""
    like: str = "Seren"
    """Acme cluster whose statistics to follow: ``Seren`` or ``Kalos``."""
    p_single: float = 0.6
    """Share of single-GPU jobs (must exceed 0.5 for the median of 1 GPU both traces report)."""
    num_tenants: int = 8
    """Tenants, drawn with Zipf-like weights 1/(i+1)."""
    tenants: tuple[tuple[str, float], ...] = ()
    """(name, weight) of each tenant instead (e.g. a quota table's queues and their nominal
    GPUs: demand in proportion to quota); tenants of weight 0 get no jobs."""
    cpu_milli_per_gpu: int = 16_000
    """CPU asked per GPU (an assumption: 16 cores per A100, as on 128-core 8-GPU nodes)."""
    cpu_jobs: bool = True
    """Include CPU-only jobs in the trace's share of jobs (False: GPU jobs only)."""
    cpu_job_cpu_milli: int = 4_000
    """CPU a CPU-only job asks (an assumption: the summary gives no CPU request; four cores, a
    data-preparation or evaluation script)."""


def _size_probs(targets: AcmeTargets, p_single: float) -> tuple[np.ndarray, np.ndarray]:
    sizes = 2 ** np.arange(0, int(np.log2(targets.max_gpu)) + 1)
    k = np.arange(1, sizes.size)

    def probs(r: float) -> np.ndarray:
        tail = r**k / (r**k).sum()
        return np.concatenate([[p_single], (1 - p_single) * tail])

    def gap(log_r: float) -> float:
        return float(probs(np.exp(log_r)) @ sizes - targets.avg_gpu_num)

    log_r = optimize.brentq(gap, -10.0, 2.0)
    return sizes, probs(float(np.exp(log_r)))


def _capped_lognormal_mean(mu: float, sigma: float, cap: float) -> float:
    """E[min(X, cap)] for X ~ LogNormal(mu, sigma)."""
    z = (np.log(cap) - mu) / sigma
    body = np.exp(mu + sigma**2 / 2) * special.ndtr(z - sigma)
    return float(body + cap * special.ndtr(-z))


def _run_sigma(targets: AcmeTargets) -> float:
    return _lognormal_sigma(targets.med_run_time_s, targets.avg_run_time_s, targets.max_run_time_s)


def _lognormal_sigma(median_s: float, mean_s: float, cap_s: float) -> float:
    """Sigma of a log-normal with median ``median_s`` whose mean, capped at ``cap_s``, is
    ``mean_s``."""
    mu = np.log(median_s)

    def gap(sigma: float) -> float:
        return _capped_lognormal_mean(mu, sigma, cap_s) - mean_s

    return float(optimize.brentq(gap, 1e-3, 8.0))


OUTCOMES = ("completed", "canceled", "failed")


def outcome_probs(gpu_s: np.ndarray, targets: AcmeTargets) -> np.ndarray:
    """P(outcome | GPU-seconds) per job (rows) and outcome (``OUTCOMES``), tilted so that the
    expected count shares and GPU-time shares over these jobs equal the targets'."""
    counts = np.array([targets.complete_rate, targets.cancel_rate, targets.fail_rate])
    times = np.array(
        [targets.complete_time_share, targets.cancel_time_share, targets.fail_time_share]
    )
    counts, times = counts / counts.sum(), times / times.sum()
    log_g = np.log(np.maximum(gpu_s, 1.0))
    log_g -= log_g.mean()  # centred, so the intercepts stay near the log count ratios
    weight = gpu_s / gpu_s.sum()

    def probs(x: np.ndarray) -> np.ndarray:
        logits = np.zeros((gpu_s.size, 3))
        logits[:, 1:] = x[:2] + np.outer(log_g, x[2:])
        return np.asarray(special.softmax(logits, axis=1))

    def gap(x: np.ndarray) -> np.ndarray:
        p = probs(x)
        return np.concatenate([p.mean(axis=0)[1:] - counts[1:], weight @ p[:, 1:] - times[1:]])

    start = np.concatenate([np.log(counts[1:] / counts[0]), np.zeros(2)])
    solved = optimize.root(gap, start, method="hybr")
    return probs(solved.x)


OUTCOME_BLOCK = 16
"""Jobs of neighbouring GPU-seconds that share one stratified draw of their outcomes."""


def _stratified_uniforms(gpu_s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniform per job: in GPU-seconds order, each block of ``OUTCOME_BLOCK`` jobs takes one
    value from each of ``OUTCOME_BLOCK`` equal strata of [0, 1), in random order (a Latin
    hypercube per block). Each job's uniform is still uniform, so P(outcome | job) is kept,
    but neighbours' outcomes are spread over their probabilities."""
    n = gpu_s.size
    order = np.argsort(gpu_s, kind="stable")
    block = np.arange(n) // OUTCOME_BLOCK
    size = np.bincount(block)[block]
    # A random rank inside each block: sort by (block, random key).
    rank = np.empty(n, dtype=np.int64)
    shuffled = np.lexsort((rng.random(n), block))
    rank[shuffled] = np.arange(n) - block[shuffled] * OUTCOME_BLOCK
    u = np.empty(n)
    u[order] = (rank + rng.random(n)) / size
    return u


def _draw_outcomes(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Outcome names from per-job probabilities (rows) and one uniform per job."""
    cumulative = np.cumsum(probs, axis=1)
    pick = (u[:, None] > cumulative[:, :-1]).sum(axis=1)
    return np.asarray(np.array(OUTCOMES)[pick])


def _cpu_jobs(
    targets: AcmeTargets, num: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Run times and outcomes of ``num`` CPU-only jobs (see the module docstring)."""
    if num == 0:
        return np.zeros(0), np.array([], dtype=str)
    sigma = _lognormal_sigma(
        targets.cpu_med_run_time_s, targets.cpu_avg_run_time_s, targets.max_run_time_s
    )
    run = rng.lognormal(np.log(targets.cpu_med_run_time_s), sigma, num)
    run = np.maximum(np.round(np.minimum(run, targets.max_run_time_s)), 1.0)
    rates = np.array([targets.cpu_complete_rate, targets.cpu_cancel_rate, targets.cpu_fail_rate])
    probs = np.broadcast_to(rates / rates.sum(), (num, 3))
    return run, _draw_outcomes(probs, _stratified_uniforms(run, rng))


def _tenant_mix(spec: WorkloadSpec) -> tuple[list[str], np.ndarray]:
    """Tenant names and the share of jobs each draws."""
    if not spec.tenants:
        return [f"tenant-{t}" for t in range(spec.num_tenants)], tenant_weights(spec.num_tenants)
    names = [name for name, _ in spec.tenants]
    weights = np.array([w for _, w in spec.tenants], dtype=float)
    if not (np.isfinite(weights).all() and (weights >= 0).all() and weights.sum() > 0):
        raise SpecError("tenants", spec.tenants, "weights >= 0, some of them > 0")
    return names, weights / weights.sum()


def synthetic_jobs(spec: WorkloadSpec, seed: int) -> pd.DataFrame:
    """Jobs in the canonical columns plus ``status``; same seed, same jobs."""
    if spec.num_jobs < 1 or spec.span_s <= 0:
        raise SpecError("num_jobs/span_s", (spec.num_jobs, spec.span_s), "must be positive")
    if not 0.5 < spec.p_single < 1.0:
        raise SpecError("p_single", spec.p_single, "must be in (0.5, 1)")
    targets = acme_targets(spec.like)
    rng = np.random.default_rng(seed)
    num_cpu = round(spec.num_jobs * targets.cpu_job_frac) if spec.cpu_jobs else 0
    num_cpu = min(num_cpu, spec.num_jobs - 1)  # at least one GPU job
    num_gpu_jobs = spec.num_jobs - num_cpu
    sizes, probs = _size_probs(targets, spec.p_single)
    gang = rng.choice(sizes, size=num_gpu_jobs, p=probs)
    sigma = _run_sigma(targets)
    gpu_run = np.minimum(
        rng.lognormal(np.log(targets.med_run_time_s), sigma, num_gpu_jobs),
        targets.max_run_time_s,
    )
    gpu_run = np.maximum(np.round(gpu_run), 1.0)
    gpu_status = _draw_outcomes(
        outcome_probs(gang * gpu_run, targets), _stratified_uniforms(gang * gpu_run, rng)
    )
    cpu_run, cpu_status = _cpu_jobs(targets, num_cpu, rng)
    mix = rng.permutation(spec.num_jobs)  # CPU and GPU jobs interleaved in arrival order
    num_gpu = np.concatenate([gang, np.zeros(num_cpu, dtype=gang.dtype)])[mix]
    run = np.concatenate([gpu_run, cpu_run])[mix]
    status = np.concatenate([gpu_status, cpu_status])[mix]
    cpu_milli = np.where(num_gpu > 0, num_gpu * spec.cpu_milli_per_gpu, spec.cpu_job_cpu_milli)
    submit = np.sort(rng.uniform(0.0, spec.span_s, spec.num_jobs))
    names, weights = _tenant_mix(spec)
    tenant = rng.choice(len(names), size=spec.num_jobs, p=weights)
    return pd.DataFrame(
        {
            "job_id": [f"job-{i:07d}" for i in range(spec.num_jobs)],
            "submit_s": submit,
            "run_s": run,
            "num_gpu": num_gpu.astype(np.int64),
            "gpu_milli": np.where(num_gpu > 0, GPU_MILLI, 0).astype(np.int64),
            "cpu_milli": cpu_milli.astype(np.int64),
            "memory_bytes": np.zeros(spec.num_jobs, dtype=np.int64),
            "gpu_models": "",
            "priority": np.zeros(spec.num_jobs, dtype=np.int64),
            "tenant": [names[t] for t in tenant],
            "est_run_s": run,
            "status": status,
        }
    )


@dataclass(frozen=True, kw_only=True)
class MixedWorkloadSpec:
    """A multi-tenant pool's workload: GPU-sharing and small pods drawn from Alibaba's openb
    pod list (shape, run time and QoS priority of one pod together; Weng et al., ATC'23) and
    multi-GPU training gangs with Acme's GPU-count distribution above one GPU (Hu et al.,
    NSDI'24), arriving (Poisson) over ``span_s`` at an offered load of ``load_frac``."""

    num_jobs: int
    span_s: float = 3 * DAY_S
    """Arrival window: a few days, so queues build and drain through day-night-free load."""
    load_frac: float = 0.8
    """Offered load: GPU-seconds asked per second over the window / the pool's GPUs."""
    pod_job_frac: float = 0.5
    """Assumption: share of the jobs that are openb pods (the rest training gangs). openb's pods
    (44% share a GPU) carry a small share of GPU time; gangs carry the rest, as in Acme."""
    max_run_s: float = DAY_S
    """Longest job: gang run times are capped here and openb's long-running pods (services up
    to weeks) truncated to it, so the pool reaches its offered load within the window."""
    warmup_s: float = DAY_S
    """Metrics are read after this warm-up (the pool starts empty)."""
    max_gang_frac: float = 0.25
    """Largest gang as a share of the pool's GPUs (a tenant's training job, not the pool)."""
    num_tenants: int = 8
    """Tenants, drawn with Zipf-like weights 1/(i+1); each tenant's quota is its weight's
    share of the pool (a quota sized to the tenant's expected demand)."""
    like: str = "Seren"

    def __post_init__(self) -> None:
        if self.num_jobs < 2 or not 0 < self.span_s < float("inf"):
            raise SpecError("num_jobs/span_s", (self.num_jobs, self.span_s), "jobs >= 2, span > 0")
        if not 0 < self.max_run_s <= self.span_s or not 0 <= self.warmup_s < self.span_s:
            raise SpecError("max_run_s/warmup_s", (self.max_run_s, self.warmup_s), "in (0, span_s]")
        if not 0 < self.load_frac <= 10:
            raise SpecError("load_frac", self.load_frac, "a share in (0, 10]")
        if not 0 < self.pod_job_frac < 1 or not 0 < self.max_gang_frac <= 1:
            raise SpecError(
                "pod_job_frac/max_gang_frac", (self.pod_job_frac, self.max_gang_frac), "in (0, 1)"
            )


def tenant_weights(num_tenants: int) -> np.ndarray:
    """Zipf-like tenant shares 1/(i+1), normalised."""
    weights = 1.0 / np.arange(1, num_tenants + 1, dtype=float)
    return np.asarray(weights / weights.sum(), dtype=float)


CPU_MILLI_PER_GANG_GPU = 16_000
"""CPU a training gang asks per GPU (as `WorkloadSpec.cpu_milli_per_gpu`)."""
GANG_PRIORITY = 1
"""Assumption: training gangs rank with openb's Burstable class, below its latency-sensitive
(LS, 2) and Guaranteed (3) pods and above best-effort (BE, 0) ones."""


def _scaled_runs(gpus: np.ndarray, runs: np.ndarray, gpu_s: float, cap_s: float) -> np.ndarray:
    """Run times times one factor, each capped at ``cap_s``, whose GPU-seconds total ``gpu_s``
    (bisection on the log of the factor: the capped total grows with it)."""
    if gpu_s <= 0:
        return np.minimum(runs * 1e-9, cap_s)
    if float((gpus * cap_s).sum()) <= gpu_s:
        return np.full_like(runs, cap_s)
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        total = float((gpus * np.minimum(runs * np.exp(mid), cap_s)).sum())
        lo, hi = (mid, hi) if total < gpu_s else (lo, mid)
    return np.asarray(np.minimum(runs * np.exp(hi), cap_s))


@functools.lru_cache(maxsize=1)
def _openb_gpu_pods() -> pd.DataFrame:
    from scalewall.sched.traces.openb import openb_path, read_openb_pods

    pods = read_openb_pods(openb_path("default")).frame
    return pods[(pods["num_gpu"] > 0) & (pods["run_s"] > 0)].reset_index(drop=True)


def mixed_jobs(
    spec: MixedWorkloadSpec, total_gpus: int, gpus_per_node: int, seed: int
) -> pd.DataFrame:
    """Jobs in the canonical columns; same seed, same jobs.

    Pods keep openb's own run times. Gangs take 2^k GPUs (k >= 1, whole nodes past one node, at
    most ``max_gang_frac`` of the pool) with Acme's size weights and log-normal run times of
    Acme's shape, all scaled by one factor (each capped at ``max_run_s``) so the offered load over
    the window is ``load_frac`` (the gangs' run times set the time unit; the pods' stay as
    measured).
    """
    rng = np.random.default_rng(seed)
    catalog = _openb_gpu_pods()
    num_pods = round(spec.num_jobs * spec.pod_job_frac)
    num_gangs = spec.num_jobs - num_pods
    pods = catalog.iloc[rng.integers(0, len(catalog), num_pods)].copy()
    pods["run_s"] = np.minimum(pods["run_s"], spec.max_run_s)
    targets = acme_targets(spec.like)
    sizes, probs = _size_probs(targets, 0.6)
    cap = max(int(spec.max_gang_frac * total_gpus), 2)
    keep = (sizes > 1) & (sizes <= cap) & ((sizes <= gpus_per_node) | (sizes % gpus_per_node == 0))
    gang_gpu = rng.choice(sizes[keep], size=num_gangs, p=probs[keep] / probs[keep].sum())
    sigma = _run_sigma(targets)
    gang_run = rng.lognormal(np.log(targets.med_run_time_s), sigma, num_gangs)
    pod_gpu_s = float((pods["num_gpu"] * pods["gpu_milli"] / GPU_MILLI * pods["run_s"]).sum())
    wanted = spec.load_frac * total_gpus * spec.span_s - pod_gpu_s
    gang_run = np.maximum(np.round(_scaled_runs(gang_gpu, gang_run, wanted, spec.max_run_s)), 1.0)
    num_gpu = np.concatenate([pods["num_gpu"].to_numpy(), gang_gpu]).astype(np.int64)
    run = np.concatenate([pods["run_s"].to_numpy(dtype=float), gang_run])
    order = rng.permutation(spec.num_jobs)
    weights = tenant_weights(spec.num_tenants)
    tenant = rng.choice(spec.num_tenants, size=spec.num_jobs, p=weights)
    frame = pd.DataFrame(
        {
            "submit_s": np.sort(rng.uniform(0.0, spec.span_s, spec.num_jobs)),
            "run_s": run[order],
            "num_gpu": num_gpu[order],
            "gpu_milli": np.concatenate(
                [pods["gpu_milli"].to_numpy(), np.full(num_gangs, GPU_MILLI)]
            ).astype(np.int64)[order],
            "cpu_milli": np.concatenate(
                [pods["cpu_milli"].to_numpy(), gang_gpu * CPU_MILLI_PER_GANG_GPU]
            ).astype(np.int64)[order],
            "memory_bytes": np.concatenate(
                [pods["memory_bytes"].to_numpy(), np.zeros(num_gangs)]
            ).astype(np.int64)[order],
            "priority": np.concatenate(
                [pods["priority"].to_numpy(), np.full(num_gangs, GANG_PRIORITY)]
            ).astype(np.int64)[order],
        }
    )
    frame.insert(0, "job_id", [f"job-{i:07d}" for i in range(spec.num_jobs)])
    frame["gpu_models"] = ""
    frame["tenant"] = [f"tenant-{t}" for t in tenant]
    frame["est_run_s"] = frame["run_s"]
    return frame
