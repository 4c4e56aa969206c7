"""Discrete-event engine: arrivals, departures, node failures and repairs on a shared cluster.

Events sit in a heap keyed by (time, priority, sequence): at equal times, finishes free capacity
before failures, repairs and arrivals are handled, and equal keys keep insertion order.
Randomness comes only from one seeded ``numpy.random.Generator`` per run, so the same seed gives
byte-identical outputs.

Jobs make progress in "work seconds" (run time on a compact placement). A job on a placement
that crosses more topology tiers runs slower (``DurationModel``). When a job stops early
(preemption or a failed node) it resumes from its last checkpoint, taken every
``checkpoint_interval_s`` of work; the wall time since that checkpoint is counted as lost.
A job stopped by a failed node also pays the reliability model's restart
(`scalewall.reliability.checkpoint.RestartSpec`) at the start of its next attempt, holding its
new GPUs while it detects, drains, starts, sets up communicators, loads its state and warms up.
Attempts a trace records (Philly) are replayed instead: the job stops where each failed attempt
ended, in its own work seconds, and the failure is charged to the machine the trace names.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scalewall.errors import SpecError
from scalewall.sched.cluster import GPU_MILLI, TOPOLOGY_LEVELS, Cluster, Placement
from scalewall.sched.duration import DurationModel, JobView, TierSlowdownModel, summarize
from scalewall.sched.jobs import JobTable, Request
from scalewall.sched.pending import PendingOrder
from scalewall.sched.policies import make_placement, make_queue
from scalewall.sched.policies.base import fits_when_empty
from scalewall.sched.tenancy import (
    Cohort,
    Tenancy,
    TenantQueue,
    borrowing_fits,
    build_tenancy,
    check_unique,
)
from scalewall.sched.traces._common import RecordedAttempt

if TYPE_CHECKING:
    from scalewall.reliability.checkpoint import RestartSpec

DAY_S = 86_400.0

FINISH, FAIL, REPAIR, ARRIVE, SAMPLE = range(5)
"""Event kinds, also their priority at equal times."""


@dataclass(frozen=True, kw_only=True)
class FailureModel:
    """Node failures, repair and isolation of unhealthy nodes."""

    failures_per_1000_node_days: float = 6.50
    """Per-node failure rate (Kokolis et al., "Revisiting Reliability in Large-Scale Machine
    Learning Research Clusters", HPCA'25: 6.50 per 1,000 node-days on RSC-1)."""
    repair_time_s: float = 4 * 3600.0
    """Time a failed node is out before it returns (an assumption; set from your operations)."""
    isolate_after_faults: int = 3
    """A node with this many faults within ``fault_window_s`` is isolated (taken out for good,
    as lemon-node detection does) and replaced by a spare when one is left."""
    fault_window_s: float = 30 * DAY_S
    """Window over which a node's faults are counted for its health score."""
    spare_nodes: int = 0
    """Nodes held out of scheduling at the start, brought in to replace isolated nodes."""
    trace_failures: tuple[tuple[float, str], ...] = ()
    """Node failures replayed from a trace, as (time_s, node name), on top of the rate model
    (set ``failures_per_1000_node_days`` to 0 to replay only these). A failure of a node that
    is already down, isolated or a spare is ignored."""
    recorded_attempts: tuple[tuple[str, tuple[RecordedAttempt, ...]], ...] = ()
    """Attempts a trace recorded, per job id (``TraceRead.attempts``): the job stops after each
    failed attempt's run time (in work seconds, so the replay's own placement and queueing
    decide when), waits again and goes on where that attempt ended; the failure counts as a
    fault of the attempt's machine (its health score), not of whichever job sits there. The
    failed attempt's GPU time counts as lost (the log does not say what a checkpoint kept of
    it), and no restart cost is added: the recorded attempts' times already hold it."""
    restart: RestartSpec | None = None
    """Phases of the restart a failed node's job pays (`reliability.checkpoint.RestartSpec`);
    None: that model's defaults. Its ``rescheduling`` phase is not charged: the replay queues
    and places the job itself."""
    state_load_s: float = 60.0
    """Assumption: reading a job's last checkpoint back (the restart's ``state_load`` phase).
    A trace gives no model sizes; for a known job pass ``checkpoint_cost(...).restore_s``."""
    charge_restarts: bool = True
    """False: a failed job resumes at once (lost work only), as the replay did before."""

    def __post_init__(self) -> None:
        _check_number("state_load_s", self.state_load_s, 0.0)
        _check_number("failures_per_1000_node_days", self.failures_per_1000_node_days, 0.0)
        _check_number("repair_time_s", self.repair_time_s, 0.0, strict=True)
        _check_number("fault_window_s", self.fault_window_s, 0.0, strict=True)
        for name in ("isolate_after_faults", "spare_nodes"):
            if getattr(self, name) < (1 if name == "isolate_after_faults" else 0):
                raise SpecError(name, getattr(self, name), "must be a non-negative integer")


NEVER_FIT = ("skip", "reject")
"""What ``SimConfig.never_fit`` may say."""

MIN_SAMPLE_INTERVAL_S = 60.0
"""Shortest time-series sampling period: trace clocks tick in seconds and jobs run for minutes
to weeks, so finer samples add events (a year at one a second is 3e7) without changing any
metric."""


@dataclass(frozen=True, kw_only=True)
class SimConfig:
    """One time-based replay."""

    queue: str = "fifo"
    """Queueing policy name (see ``scalewall.sched.policies.queue_names``)."""
    placement: str = "bestfit"
    """Placement policy name (see ``scalewall.sched.policies.placement_names``)."""
    seed: int = 0
    checkpoint_interval_s: float = 3600.0
    """Work between checkpoints; a stopped job loses what it did since the last one and does
    it again when it resumes (the catch-up). The stall of each checkpoint is not added: a
    trace's run times (and the generators drawn from them) already include it."""
    sample_interval_s: float = 3600.0
    """Time-series sampling period."""
    failures: FailureModel | None = None
    """None: nodes never fail."""
    quota_gpus: dict[str, float] | None = None
    """Nominal GPU quota per tenant, all in one cohort with no borrowing or lending limit;
    None: the cluster split evenly between the trace's tenants. Ignored with ``tenant_queues``."""
    tenant_queues: tuple[TenantQueue, ...] | None = None
    """Tenant queues with cohorts, borrowing and lending limits and priorities (a quota
    file, ``tenancy.load_quotas``); every tenant of the trace needs one."""
    cohorts: tuple[Cohort, ...] = ()
    """Cohorts that nest the queues' cohorts in a tree, with their own limits (a quota file's
    ``[[cohort]]`` tables); a cohort not listed is a root without limits."""
    check_invariants: bool = False
    """Assert the cluster's books after every event (for tests; slower)."""
    min_run_before_preempt_s: float = 600.0
    """A job that (re)started less than this long ago is not preempted: it keeps a started job
    from being stopped again before it does useful work (Kueue and Volcano leave this to a
    policy; 10 minutes is an assumption, about the restart cost of a large training job)."""
    walltime_factor: float = math.inf
    """A job is ended once its wall time on the cluster, over all its attempts, reaches this
    times its runtime estimate (``est_run_s``: the trace's requested limit, or an estimate), as
    a batch scheduler's time limit ends an overrunning job; inf: no limit."""
    max_victims: int = 64
    """Most running jobs one preemption looks at, cheapest first (bounds a pass's cost)."""
    never_fit: str = "skip"
    """A job that cannot fit the cluster even when it is empty (more GPUs than it has, or a
    shape no node holds): ``skip`` leaves it out of the replay with a warning (``skipped``
    per job) instead of letting it block the queue forever; ``reject`` stops with an error."""
    long_wait_warning_s: float = 7 * DAY_S
    """A warning is recorded once when the oldest waiting job has waited this long (a queue
    blocked by a job that needs most of the cluster)."""

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise SpecError("seed", self.seed, "must be a non-negative integer")
        _check_number("checkpoint_interval_s", self.checkpoint_interval_s, 0.0, strict=True)
        _check_number("min_run_before_preempt_s", self.min_run_before_preempt_s, 0.0)
        if not (self.walltime_factor > 0 and not math.isnan(self.walltime_factor)):
            raise SpecError("walltime_factor", self.walltime_factor, "a number > 0, or inf")
        if self.never_fit not in NEVER_FIT:
            raise SpecError("never_fit", self.never_fit, f"valid: {', '.join(NEVER_FIT)}")
        _check_number("long_wait_warning_s", self.long_wait_warning_s, 0.0, strict=True)
        if self.max_victims < 1:
            raise SpecError("max_victims", self.max_victims, "must be a positive integer")
        if not MIN_SAMPLE_INTERVAL_S <= self.sample_interval_s < math.inf:
            raise SpecError(
                "sample_interval_s",
                self.sample_interval_s,
                f"a finite number of seconds >= {MIN_SAMPLE_INTERVAL_S:g}",
            )


REPLAYED_PHASES = ("rescheduling",)
"""Restart phases the replay itself simulates (queueing and placing the job again), so they
are not charged as a fixed time."""


def _restart_spec(failures: FailureModel | None) -> RestartSpec | None:
    """The restart phases a failed job pays; the reliability model (and its scipy import) is
    loaded only for a replay with failures."""
    if failures is None or not failures.charge_restarts:
        return None
    if failures.restart is not None:
        return failures.restart
    from scalewall.reliability.checkpoint import RestartSpec

    return RestartSpec()


def _check_number(name: str, value: float, least: float, *, strict: bool = False) -> None:
    """A finite number at least ``least`` (above it when ``strict``)."""
    ok = math.isfinite(value) and (value > least if strict else value >= least)
    if not ok:
        relation = ">" if strict else ">="
        raise SpecError(name, value, f"must be a finite number {relation} {least:g}")


@dataclass(kw_only=True, eq=False)
class JobState:
    """Per-job mutable bookkeeping, one array per field."""

    n: int
    first_start_s: npt.NDArray[np.float64] = field(init=False)
    end_s: npt.NDArray[np.float64] = field(init=False)
    work_done_s: npt.NDArray[np.float64] = field(init=False)
    slowdown: npt.NDArray[np.float64] = field(init=False)
    restarts: npt.NDArray[np.int64] = field(init=False)
    preemptions: npt.NDArray[np.int64] = field(init=False)
    lost_gpu_s: npt.NDArray[np.float64] = field(init=False)
    metered_gpu_s: npt.NDArray[np.float64] = field(init=False)
    epoch: npt.NDArray[np.int64] = field(init=False)
    tiers: npt.NDArray[np.int64] = field(init=False)
    wall_used_s: npt.NDArray[np.float64] = field(init=False)
    """Wall seconds run over all attempts (what a time limit counts)."""
    timed_out: npt.NDArray[np.bool_] = field(init=False)
    """Ended at its time limit before its work was done."""
    limit_hit: npt.NDArray[np.bool_] = field(init=False)
    """The current attempt's end event is its time limit."""
    skipped: npt.NDArray[np.bool_] = field(init=False)
    """Left out of the replay: it could never fit the cluster (``SimConfig.never_fit``)."""
    restart_due_s: npt.NDArray[np.float64] = field(init=False)
    """Restart overhead the next attempt pays before it does work (after a node failure)."""
    overhead_s: npt.NDArray[np.float64] = field(init=False)
    """Restart overhead of the current attempt (wall seconds at its start)."""
    restart_gpu_s: npt.NDArray[np.float64] = field(init=False)
    """GPU-seconds held while restarting."""
    recorded_next: npt.NDArray[np.int64] = field(init=False)
    """Index of the next recorded failed attempt (``FailureModel.recorded_attempts``)."""
    recorded_hit: npt.NDArray[np.bool_] = field(init=False)
    """The current attempt's end event is a recorded failure."""

    def __post_init__(self) -> None:
        self.first_start_s = np.full(self.n, np.nan)
        self.end_s = np.full(self.n, np.nan)
        self.work_done_s = np.zeros(self.n)
        self.slowdown = np.ones(self.n)
        self.restarts = np.zeros(self.n, dtype=np.int64)
        self.preemptions = np.zeros(self.n, dtype=np.int64)
        self.lost_gpu_s = np.zeros(self.n)
        self.metered_gpu_s = np.zeros(self.n)
        self.epoch = np.zeros(self.n, dtype=np.int64)
        self.tiers = np.zeros(self.n, dtype=np.int64)
        self.wall_used_s = np.zeros(self.n)
        self.timed_out = np.zeros(self.n, dtype=bool)
        self.limit_hit = np.zeros(self.n, dtype=bool)
        self.skipped = np.zeros(self.n, dtype=bool)
        self.restart_due_s = np.zeros(self.n)
        self.overhead_s = np.zeros(self.n)
        self.restart_gpu_s = np.zeros(self.n)
        self.recorded_next = np.zeros(self.n, dtype=np.int64)
        self.recorded_hit = np.zeros(self.n, dtype=bool)


class Simulation:
    """One run of a workload on a cluster; implements the queueing policies' ``SchedulerView``."""

    def __init__(
        self,
        cluster: Cluster,
        jobs: JobTable,
        config: SimConfig,
        *,
        duration: DurationModel | None = None,
        progress: Callable[[float], None] | None = None,
    ) -> None:
        if np.isnan(jobs.run_s).any() or np.isnan(jobs.submit_s).any():
            raise SpecError(
                "trace",
                "no run times",
                "a time-based replay needs submit and run times for every job",
            )
        if config.checkpoint_interval_s <= 0 or config.sample_interval_s <= 0:
            raise SpecError("checkpoint/sample interval", "<= 0", "must be > 0 seconds")
        order = np.lexsort((np.arange(len(jobs)), jobs.submit_s))
        self._jobs = jobs.subset(order.astype(np.int64))
        self.cluster = cluster.copy_fresh()
        self.config = config
        self.duration = duration or TierSlowdownModel()
        self.rng = np.random.default_rng(config.seed)
        self.placement = make_placement(config.placement)
        self.placement.prepare(self.cluster, self._jobs, np.random.default_rng([config.seed, 1]))
        self.queue = make_queue(config.queue)
        self.requests: list[Request] = self._jobs.requests(self.cluster)
        self.state = JobState(n=len(self._jobs))
        self._pending: list[int] = []
        self._orders: dict[str, PendingOrder] = {}
        """The pending jobs in each order a policy asked for (``pending_in_order``)."""
        self._running: dict[int, float] = {}
        self.where: dict[int, Placement] = {}
        self._borrowed: set[int] = set()
        self._expected_end: dict[int, float] = {}
        """Running job -> when it ends by its estimate."""
        self._ends: list[tuple[float, int]] = []
        """(expected end, job) of the running jobs, sorted (the order reservations release)."""
        self.node_jobs: dict[int, set[int]] = {}
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.repairs_pending = 0
        self.arrivals_left = len(jobs)
        self.seq = 0
        self.now = 0.0
        self.progress = progress
        self.events: list[tuple[float, str, int]] = []
        self.samples: list[dict[str, float]] = []
        num_tenants = len(self._jobs.tenant_names)
        self._tenant_milli = np.zeros(num_tenants, dtype=np.int64)
        self._tenant_cpu = np.zeros(num_tenants, dtype=np.int64)
        self._tenant_borrowed = np.zeros(num_tenants, dtype=np.int64)
        self._tenant_mem = np.zeros(num_tenants, dtype=np.int64)
        self._tenancy = build_tenancy(
            self._jobs.tenant_names, self._tenant_queues(config), config.cohorts
        )
        self._quota = self._tenancy.quota
        self._flavor_of_model, self._flavor_bits = self._flavor_models()
        num_flavors = len(self._tenancy.flavors)
        self._tenant_flavor = np.zeros((num_tenants, num_flavors), dtype=np.int64)
        self._tenant_flavor_borrowed = np.zeros((num_tenants, num_flavors), dtype=np.int64)
        self._flavored_requests: dict[tuple[int, int], Request] = {}
        self.total_milli = self.cluster.total_gpus * GPU_MILLI
        self._cpu_total = max(int(self.cluster.cpu_cap.sum()), 1)
        self._mem_total = max(int(self.cluster.mem_cap.sum()), 1)
        """Capacity totals ``usage_vector`` divides by (node capacities never change)."""
        self.faults: dict[int, list[float]] = {}
        self.spares: list[int] = []
        self.isolated: set[int] = set()
        self.lost_by_kind = {"failure": 0.0, "preemption": 0.0}
        self.preemption_log: list[tuple[float, int, int, tuple[int, ...]]] = []
        """Per preemption: (time, victim, the job it made room for, the nodes they share)."""
        self._no_room: set[tuple[int, frozenset[int], int]] = set()
        """(shape, nodes avoided) that found no placement at cluster generation
        ``_no_room_generation``: placement is a function of the cluster's state, so the same
        shape fails again until something changes (a long queue holds many jobs of few shapes)."""
        self._no_room_generation = -1
        self._reservations: dict[tuple[int, frozenset[int]], tuple[float, frozenset[int], int]] = {}
        """Reservations (expected end, nodes, index in ``_ends`` of the job whose end makes
        room) by (shape, nodes taken) at cluster generation ``_reservation_generation``:
        running jobs' expected ends do not move while the cluster does not change, so passes
        after arrivals alone reuse them (and ``_carry_reservations`` keeps them over the
        release of the job expected to end first)."""
        self._reservation_generation = -1
        self.warnings: list[str] = []
        """Conditions a reader of the results should know of (jobs skipped, a stuck queue)."""
        self._waited_long = False
        self._restart = _restart_spec(config.failures)
        self._recorded = self._recorded_failures(config.failures)
        """Job -> (work seconds at which each retried attempt failed, its machine)."""
        self.recorded_faults: dict[str, int] = {}
        """Recorded failures per machine name."""
        self._node_index = (
            {name: i for i, name in enumerate(self.cluster.names)} if self._recorded else {}
        )
        self._dirty = True
        """Something a queue pass depends on changed since the last pass (an arrival, freed or
        returned capacity). Without a change a pass would start nothing: no policy's choice
        gets easier as time passes alone (backfill's "ends before the shadow time" only gets
        harder), so passes on unchanged state are skipped."""

    # ----- SchedulerView -------------------------------------------------------------------
    @property
    def now_s(self) -> float:
        return self.now

    @property
    def jobs(self) -> JobTable:
        return self._jobs

    @property
    def pending(self) -> list[int]:
        return self._pending

    @property
    def running(self) -> dict[int, float]:
        return self._running

    @property
    def tenant_gpu_milli(self) -> npt.NDArray[np.int64]:
        return self._tenant_milli

    @property
    def tenant_borrowed_gpu_milli(self) -> npt.NDArray[np.int64]:
        return self._tenant_borrowed

    @property
    def quota_gpu_milli(self) -> npt.NDArray[np.int64]:
        return self._quota

    @property
    def tenancy(self) -> Tenancy:
        return self._tenancy

    @property
    def free_gpu_milli(self) -> int:
        return int(self.cluster.node_free_milli[self.cluster.schedulable].sum())

    @property
    def total_gpu_milli(self) -> int:
        return self.total_milli

    @property
    def tenant_flavor_gpu_milli(self) -> npt.NDArray[np.int64]:
        return self._tenant_flavor

    @property
    def tenant_flavor_borrowed_gpu_milli(self) -> npt.NDArray[np.int64]:
        return self._tenant_flavor_borrowed

    def running_flavor(self, job: int) -> int:
        model = int(self.cluster.node_model[self.where[job].nodes[0]])
        return int(self._flavor_of_model[model]) if model >= 0 else -1

    def _flavored(self, job: int, flavor: int) -> Request:
        """The job's request narrowed to one flavor's GPU model (``flavor`` < 0: as asked);
        one per (shape, flavor), since jobs of one shape ask the same."""
        request = self.requests[job]
        if flavor < 0:
            return request
        key = (request.shape_id, flavor)
        narrowed = self._flavored_requests.get(key)
        if narrowed is None:
            mask = request.model_mask & int(self._flavor_bits[flavor])
            narrowed = self._flavored_requests[key] = replace(request, model_mask=mask)
        return narrowed

    def borrowed(self, job: int) -> bool:
        return job in self._borrowed

    def pending_in_order(self, order: str) -> PendingOrder:
        if order not in self._orders:
            jobs = self._jobs
            keys = {
                "priority": (-jobs.priority,),
                "est_run": (jobs.est_run_s,),
                "tenant": (jobs.tenant,),
                "tenant_priority": (jobs.tenant, -jobs.priority),
            }
            if order not in keys:
                raise SpecError("order", order, f"valid: {', '.join(keys)}")
            groups = jobs.tenant if order.startswith("tenant") else None
            self._orders[order] = PendingOrder(keys[order], self._pending, groups=groups)
        return self._orders[order]

    def usage_vector(self, tenant: int) -> npt.NDArray[np.float64]:
        return np.array(
            [
                self._tenant_milli[tenant] / max(self.total_milli, 1),
                self._tenant_cpu[tenant] / self._cpu_total,
                self._tenant_mem[tenant] / self._mem_total,
            ]
        )

    def expected_end_s(self, job: int) -> float:
        return self._expected_end[job]

    def _estimate_end(self, job: int) -> float:
        """When a job just started ends by its estimate (fixed while it runs)."""
        left = max(float(self._jobs.est_run_s[job]) - float(self.state.work_done_s[job]), 0.0)
        overhead = float(self.state.overhead_s[job])
        return self._running[job] + overhead + left * float(self.state.slowdown[job])

    def try_start(
        self,
        job: int,
        *,
        borrowed: bool = False,
        avoid: frozenset[int] | set[int] = frozenset(),
        flavor: int = -1,
    ) -> bool:
        request = self.requests[job]
        key = (request.shape_id, frozenset(avoid), flavor)
        if self._no_room_generation != self.cluster.generation:
            self._no_room.clear()
            self._no_room_generation = self.cluster.generation
        if key in self._no_room:
            return False
        if flavor >= 0:
            request = self._flavored(job, flavor)
        placement = None if self._hides_every_node(avoid) else self._place_avoiding(request, avoid)
        if placement is None:
            self._no_room.add(key)
            return False
        self.cluster.allocate(placement)
        self.placement.allocated(placement, request)
        self._pending_remove(job)
        self._running[job] = self.now
        self.where[job] = placement
        if borrowed:
            self._borrowed.add(job)
        for node in placement.nodes:
            self.node_jobs.setdefault(node, set()).add(job)
        self._account(job, placement, +1)
        summary = summarize(self.cluster, placement)
        base = float(self._jobs.run_s[job])
        view = JobView(
            job_index=job, num_gpu=request.num_gpu, gpu_milli=request.gpu_milli, base_run_s=base
        )
        run_s = self.duration.run_time_s(view, summary)
        self.state.slowdown[job] = run_s / base if base > 0 else 1.0
        overhead = float(self.state.restart_due_s[job])
        self.state.overhead_s[job] = overhead
        self.state.restart_due_s[job] = 0.0
        end_s = self._estimate_end(job)
        self._expected_end[job] = end_s
        bisect.insort(self._ends, (end_s, job))
        self.state.tiers[job] = summary.tiers_crossed
        if math.isnan(self.state.first_start_s[job]):
            self.state.first_start_s[job] = self.now
        left = max(base - self.state.work_done_s[job], 0.0) * self.state.slowdown[job] + overhead
        limit = self.config.walltime_factor * float(self._jobs.est_run_s[job])
        limit_left = max(limit - float(self.state.wall_used_s[job]), 0.0)
        fail_left = self._recorded_failure_left(job, overhead)
        self.state.limit_hit[job] = limit_left < min(left, fail_left)
        self.state.recorded_hit[job] = not self.state.limit_hit[job] and fail_left < left
        self._push(self.now + min(left, limit_left, fail_left), FINISH, job)
        self.events.append((self.now, "start", job))
        return True

    def _place_avoiding(
        self, request: Request, avoid: frozenset[int] | set[int]
    ) -> Placement | None:
        """The placement policy's choice with the nodes in ``avoid`` held unschedulable."""
        if not avoid:
            return self.placement.place(self.cluster, request)
        nodes = np.fromiter(avoid, np.int64, len(avoid))
        hidden = nodes[self.cluster.schedulable[nodes]]
        generation = self.cluster.generation
        self.cluster.set_schedulable_many(hidden, False)
        try:
            return self.placement.place(self.cluster, request)
        finally:
            self.cluster.set_schedulable_many(hidden, True)
            self.cluster.generation = generation  # the same state as before

    def _hides_every_node(self, avoid: frozenset[int] | set[int]) -> bool:
        """True when ``avoid`` holds every schedulable node: no placement can exist, since
        a placement policy places on schedulable nodes only (conservative backfill's
        reservations soon cover a small cluster, and each would walk the running jobs)."""
        if not avoid:
            return False
        up = int(np.count_nonzero(self.cluster.schedulable))
        if len(avoid) < up:
            return False
        nodes = np.fromiter(avoid, np.int64, len(avoid))
        return int(np.count_nonzero(self.cluster.schedulable[nodes])) == up

    def reservation(self, job: int, taken: frozenset[int] | set[int]) -> tuple[float, set[int]]:
        request = self.requests[job]
        key = (request.shape_id, frozenset(taken))
        if self._reservation_generation != self.cluster.generation:
            self._reservations.clear()
            self._reservation_generation = self.cluster.generation
        if key not in self._reservations:
            if self._hides_every_node(taken):
                self._reservations[key] = (math.inf, frozenset(), len(self._ends))
            else:
                self._reservations[key] = self._find_reservation(request, taken)
        end_s, nodes, _ = self._reservations[key]
        return (max(end_s, self.now), set(nodes))

    def _find_reservation(
        self, request: Request, taken: frozenset[int] | set[int]
    ) -> tuple[float, frozenset[int], int]:
        """Release running jobs in the order they are expected to end until the placement
        finds room; the cluster is then restored, its generation included, since its state is
        unchanged. No placement exists before the released and free GPUs reach the request's,
        so the walk starts there: the jobs ending before are released in one numpy pass (or,
        when fewer end after, the cluster is emptied and those allocated back), then one by
        one with a placement call after each, the calls a job-by-job walk makes."""
        ends = self._ends
        demand = [self.requests[j].gpu_demand_milli for _, j in ends]
        free = np.cumsum(demand) + self.free_gpu_milli
        first = int(np.searchsorted(free, request.gpu_demand_milli))
        if first == len(ends):
            return (math.inf, frozenset(), len(ends))
        cluster = self.cluster
        snapshot = cluster.snapshot()
        if 2 * (first + 1) <= len(ends):
            cluster.apply_many([self.where[j] for _, j in ends[: first + 1]], +1)
        else:
            cluster.free_all()
            cluster.apply_many([self.where[j] for _, j in ends[first + 1 :]], -1)
        found: tuple[float, frozenset[int], int] = (math.inf, frozenset(), len(ends))
        for i in range(first, len(ends)):
            if i > first:
                cluster.release(self.where[ends[i][1]])
            placement = self._place_avoiding(request, taken)
            if placement is not None:
                found = (ends[i][0], frozenset(placement.nodes), i)
                break
        cluster.restore(snapshot)
        return found

    def _carry_reservations(self) -> None:
        """Keep the reservations over the release of the job expected to end first.

        A reservation walk visits the states S0 + E[:i+1] (E: the running jobs by expected
        end). With E[0] released, the new walk's states S0' + E'[:j+1] are the old S0 +
        E[:j+2], and its first state with enough free GPUs is the old walk's first, or its
        second when the old walk's first was S0 + E[0]. So a reservation found at index
        i >= 1, or never, is what the new walk finds (at i - 1): the same placement calls on
        the same states, with a placement policy that is a function of the cluster alone
        (``pure``); one found at i = 0 is recomputed."""
        if not getattr(self.placement, "pure", False):
            return
        self._reservations = {
            key: (end_s, nodes, i - 1)
            for key, (end_s, nodes, i) in self._reservations.items()
            if i >= 1
        }
        self._reservation_generation = self.cluster.generation

    def preempt(self, job: int) -> None:
        self.state.preemptions[job] += 1
        self._stop(job, "preemption")
        self.events.append((self.now, "preempt", job))

    def start_by_preempting(
        self, job: int, candidates: list[int], *, borrowed: bool = False, flavor: int = -1
    ) -> bool:
        """Start ``job`` by preempting the fewest and cheapest of ``candidates`` whose GPUs, on
        the placement found, let it start; preempt nothing and return False when none do.

        Candidates that ran less than ``min_run_before_preempt_s`` are left alone. The rest are
        tried cheapest first: jobs whose nodes hold only candidates (freeing whole nodes and
        their NVLink domains) before jobs that share nodes with others, then by the work a
        preemption would lose (GPU-seconds since the last checkpoint). Victims are released
        one by one until the placement policy finds room; those the placement does not touch,
        and any whose release it turns out not to need, keep running."""
        order = self._victim_order(candidates)
        request = self._flavored(job, flavor)
        released: list[int] = []
        found: Placement | None = None
        generation = self.cluster.generation
        free = self.free_gpu_milli
        for victim in order:
            self.cluster.release(self.where[victim])
            released.append(victim)
            free += self.requests[victim].gpu_demand_milli
            if free < request.gpu_demand_milli:
                continue  # no placement before this many GPUs are free at all
            found = self.placement.place(self.cluster, request)
            if found is not None:
                break
        if found is None:
            for victim in released:
                self.cluster.allocate(self.where[victim])
            self.cluster.generation = generation  # the same state as before
            return False
        needed = self._prune_victims(request, released, found)
        for victim in needed:
            shared = tuple(sorted(set(self.where[victim].nodes) & set(found.nodes)))
            self.preemption_log.append((self.now, victim, job, shared))
            self.preempt(victim)
        started = self.try_start(job, borrowed=borrowed, flavor=flavor)
        assert started, "a placement existed with the victims' resources released"
        return True

    def _victim_order(self, candidates: list[int]) -> list[int]:
        """Preemptible candidates, cheapest first (see :meth:`start_by_preempting`)."""
        least = self.config.min_run_before_preempt_s
        ok = [j for j in candidates if self.now - self._running[j] >= least]
        pool = set(ok)
        interval = self.config.checkpoint_interval_s

        def cost(j: int) -> tuple[int, float, float, int]:
            nodes = self.where[j].nodes
            whole = all(self.node_jobs[n] <= pool for n in nodes)
            done = (
                self.state.work_done_s[j] + (self.now - self._running[j]) / self.state.slowdown[j]
            )
            lost = (done % interval) * self.requests[j].gpu_demand_milli
            return (0 if whole else 1, lost, -self._running[j], -j)

        return sorted(ok, key=cost)[: self.config.max_victims]

    def _prune_victims(self, request: Request, released: list[int], found: Placement) -> list[int]:
        """The released victims the placement needs: those on its nodes (the others do not
        change what is free there), less any whose resources it can do without (tried most
        costly first). The cluster is left as it was; ``preempt`` releases the needed ones."""
        nodes = set(found.nodes)
        needed = []
        for victim in released:
            if nodes & set(self.where[victim].nodes):
                needed.append(victim)
            else:
                self.cluster.allocate(self.where[victim])
        for victim in reversed(list(needed)):
            self.cluster.allocate(self.where[victim])
            if self.placement.place(self.cluster, request) is None:
                self.cluster.release(self.where[victim])
            else:
                needed.remove(victim)
        for victim in needed:
            self.cluster.allocate(self.where[victim])  # preempt() releases them for real
        return needed

    # ----- internals -----------------------------------------------------------------------
    def _tenant_queues(self, config: SimConfig) -> tuple[TenantQueue, ...]:
        """The configured queues; else one cohort of ``quota_gpus`` (or an even split)."""
        names = self._jobs.tenant_names
        if config.tenant_queues is not None:
            check_unique(config.tenant_queues)
            return config.tenant_queues
        quota_gpus = config.quota_gpus
        if quota_gpus is None:
            even = self.cluster.total_gpus * GPU_MILLI // max(len(names), 1) / GPU_MILLI
            return tuple(TenantQueue(name=t, nominal_gpus=even) for t in names)
        negative = sorted(t for t, q in quota_gpus.items() if q < 0)
        if negative:
            raise SpecError(f"quota[{negative[0]}]", quota_gpus[negative[0]], "must be >= 0 GPUs")
        # A quota for a tenant without jobs is allowed (an idle queue): it lends all of it.
        quotas = {t: 0.0 for t in names} | quota_gpus
        return tuple(TenantQueue(name=t, nominal_gpus=float(q)) for t, q in quotas.items())

    def _pending_add(self, job: int) -> None:
        bisect.insort(self._pending, job)
        for order in self._orders.values():
            order.add(job)

    def _pending_remove(self, job: int) -> None:
        self._pending.pop(bisect.bisect_left(self._pending, job))
        for order in self._orders.values():
            order.remove(job)

    def _push(self, time_s: float, kind: int, arg: int) -> None:
        """Queue an event; a finish event carries the job's epoch, so one made stale by a
        preemption or failure is recognised and dropped."""
        epoch = int(self.state.epoch[arg]) if kind == FINISH else 0
        heapq.heappush(self.heap, (time_s, kind, self.seq, arg, epoch))
        self.seq += 1
        if kind == REPAIR:
            self.repairs_pending += 1

    def _account(self, job: int, placement: Placement, sign: int) -> None:
        tenant = int(self._jobs.tenant[job])
        gpus = sum(len(slots) for slots in placement.gpu_slots)
        self._tenant_milli[tenant] += sign * gpus * placement.gpu_milli
        if job in self._borrowed:
            self._tenant_borrowed[tenant] += sign * gpus * placement.gpu_milli
        self._tenant_cpu[tenant] += sign * sum(placement.cpu_milli)
        self._tenant_mem[tenant] += sign * sum(placement.memory_bytes)
        if self._tenant_flavor.shape[1]:
            self._account_flavors(job, placement, sign)

    def _account_flavors(self, job: int, placement: Placement, sign: int) -> None:
        """Each tenant's GPUs per flavor (the GPU model of each node the job holds)."""
        tenant = int(self._jobs.tenant[job])
        for node, slots in zip(placement.nodes, placement.gpu_slots, strict=True):
            model = int(self.cluster.node_model[node])
            flavor = int(self._flavor_of_model[model]) if model >= 0 else -1
            if flavor >= 0 and slots:
                milli = sign * len(slots) * placement.gpu_milli
                self._tenant_flavor[tenant, flavor] += milli
                if job in self._borrowed:
                    self._tenant_flavor_borrowed[tenant, flavor] += milli

    def _flavor_models(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Flavor index per cluster GPU model (-1: none) and each flavor's model bit."""
        models = self.cluster.model_names
        of_model = np.full(max(len(models), 1), -1, dtype=np.int64)
        bits = np.zeros(len(self._tenancy.flavors), dtype=np.int64)
        for k, name in enumerate(self._tenancy.flavors):
            if name not in models:
                valid = f"a GPU model of the cluster ({', '.join(models)})"
                raise SpecError("flavor", name, valid, where="quotas")
            of_model[models.index(name)] = k
            bits[k] = 1 << models.index(name)
        return of_model, bits

    def _release(self, job: int) -> float:
        """Take a running job off the cluster; returns the wall seconds it just ran."""
        placement = self.where.pop(job)
        carry = self._ends[0][1] == job and self._reservation_generation == self.cluster.generation
        self._ends.pop(bisect.bisect_left(self._ends, (self._expected_end.pop(job), job)))
        self.cluster.release(placement)
        if carry:
            self._carry_reservations()
        self.placement.released(placement, self.requests[job])
        for node in placement.nodes:
            self.node_jobs[node].discard(job)
        self._account(job, placement, -1)
        self._borrowed.discard(job)
        ran = self.now - self._running.pop(job)
        self.state.wall_used_s[job] += ran
        self._dirty = True
        gpus = self.requests[job].gpu_demand_milli / GPU_MILLI
        self.state.metered_gpu_s[job] += ran * gpus
        self.state.epoch[job] += 1
        return ran

    def _ran_past_overhead(self, job: int, ran: float) -> float:
        """Wall seconds of work in an attempt that ran ``ran``: its restart overhead first
        (charged as restart GPU-seconds), the rest is work."""
        st = self.state
        charged = min(ran, float(st.overhead_s[job]))
        st.restart_gpu_s[job] += charged * self.requests[job].gpu_demand_milli / GPU_MILLI
        st.restart_due_s[job] = float(st.overhead_s[job]) - charged  # left, if cut short
        st.overhead_s[job] = 0.0
        return ran - charged

    def _stop(self, job: int, why: str) -> None:
        """Stop a running job early; it rolls back to its last checkpoint and waits again
        (after a node failure, paying the restart at its next start)."""
        nodes = len(self.where[job].nodes)
        ran = self._ran_past_overhead(job, self._release(job))
        if why == "failure" and self._restart is not None:
            self.state.restart_due_s[job] = self._restart_cost_s(job, nodes)
        done = self.state.work_done_s[job] + ran / self.state.slowdown[job]
        interval = self.config.checkpoint_interval_s
        kept = max(math.floor(done / interval) * interval, self._recorded_start(job))
        lost_wall = (done - kept) * self.state.slowdown[job]
        lost = lost_wall * self.requests[job].gpu_demand_milli / GPU_MILLI
        self.state.lost_gpu_s[job] += lost
        self.lost_by_kind[why] += lost
        self.state.work_done_s[job] = kept
        self._pending_add(job)

    def _finish(self, job: int) -> None:
        ran = self._ran_past_overhead(job, self._release(job))
        self.state.end_s[job] = self.now
        if self.state.limit_hit[job]:
            self.state.work_done_s[job] += ran / self.state.slowdown[job]
            self.state.timed_out[job] = True
            self.events.append((self.now, "timeout", job))
            return
        self.state.work_done_s[job] = float(self._jobs.run_s[job])
        self.events.append((self.now, "finish", job))

    def _fail(self, node: int) -> None:
        failures = self.config.failures
        assert failures is not None
        self.events.append((self.now, "node_fail", node))
        for job in sorted(self.node_jobs.get(node, ())):
            self.state.restarts[job] += 1
            self._stop(job, "failure")
        self.cluster.set_schedulable(node, False)
        recent = [t for t in self.faults.get(node, []) if self.now - t <= failures.fault_window_s]
        self.faults[node] = [*recent, self.now]
        if len(self.faults[node]) >= failures.isolate_after_faults:
            self.isolated.add(node)
            self.events.append((self.now, "node_isolated", node))
            if self.spares:
                spare = self.spares.pop(0)
                self.cluster.set_schedulable(spare, True)
                self._dirty = True
                self._schedule_failure(spare)
                self.events.append((self.now, "spare_in", spare))
        else:
            self._push(self.now + failures.repair_time_s, REPAIR, node)

    def _restart_cost_s(self, job: int, nodes: int) -> float:
        """Wall seconds a job restarting after a node failure holds its GPUs before it works
        again: the restart phases of `RestartSpec.phases` for its ranks and nodes, a new node
        needed, less ``rescheduling`` (the replay's own queueing and placement)."""
        failures, restart = self.config.failures, self._restart
        assert failures is not None and restart is not None
        phases = restart.phases(
            ranks=self.requests[job].num_gpu,
            restore_s=failures.state_load_s,
            nodes=nodes,
            new_node=True,
        )
        return sum(s for phase, s in phases.items() if phase not in REPLAYED_PHASES)

    def _recorded_failures(
        self, failures: FailureModel | None
    ) -> dict[int, tuple[list[float], list[str]]]:
        """Per job index: the work seconds at which each retried attempt ended, and its
        machine (``FailureModel.recorded_attempts``)."""
        if failures is None or not failures.recorded_attempts:
            return {}
        rows: dict[str, list[int]] = {}
        for j, job_id in enumerate(self._jobs.job_id):
            rows.setdefault(job_id, []).append(j)
        out: dict[int, tuple[list[float], list[str]]] = {}
        for job_id, attempts in failures.recorded_attempts:
            if job_id not in rows:
                raise SpecError("recorded_attempts", job_id, "names no job of the trace")
            ends = np.cumsum([a.run_s for a in attempts]).tolist()
            failed = [i for i, a in enumerate(attempts) if a.failed]
            for j in rows[job_id]:
                out[j] = ([ends[i] for i in failed], [attempts[i].machine for i in failed])
        return out

    def _recorded_failure_left(self, job: int, overhead: float) -> float:
        """Wall seconds until the job's next recorded failure, from its start now."""
        recorded = self._recorded.get(job)
        if recorded is None or self.state.recorded_next[job] >= len(recorded[0]):
            return math.inf
        at = recorded[0][int(self.state.recorded_next[job])]
        work = max(at - float(self.state.work_done_s[job]), 0.0)
        return overhead + work * float(self.state.slowdown[job])

    def _recorded_start(self, job: int) -> float:
        """Work seconds at which the job's current recorded attempt began (0 before any
        failed): a later stop rolls back no further, since the recorded attempt's run time
        is counted from there."""
        i = int(self.state.recorded_next[job])
        return self._recorded[job][0][i - 1] if i else 0.0

    def _recorded_fail(self, job: int) -> None:
        """A recorded failed attempt ends: the job waits again and goes on where it ended; the
        attempt's GPU time is lost to the failure and the fault is the recorded machine's."""
        st = self.state
        self._ran_past_overhead(job, self._release(job))
        ends, machines = self._recorded[job]
        i = int(st.recorded_next[job])
        st.recorded_next[job] += 1
        st.work_done_s[job] = ends[i]
        attempt_s = ends[i] - (ends[i - 1] if i else 0.0)
        lost = attempt_s * float(st.slowdown[job]) * self.requests[job].gpu_demand_milli / GPU_MILLI
        st.lost_gpu_s[job] += lost
        self.lost_by_kind["failure"] += lost
        st.restarts[job] += 1
        self.events.append((self.now, "recorded_fail", job))
        machine = machines[i]
        self.recorded_faults[machine] = self.recorded_faults.get(machine, 0) + 1
        node = self._node_index.get(machine)
        if node is not None:
            self.faults.setdefault(node, []).append(self.now)
            self.events.append((self.now, "machine_fault", node))
        self._pending_add(job)

    def _schedule_failure(self, node: int) -> None:
        failures = self.config.failures
        assert failures is not None
        rate_per_s = failures.failures_per_1000_node_days / 1000.0 / DAY_S
        if rate_per_s > 0:
            self._push(self.now + float(self.rng.exponential(1.0 / rate_per_s)), FAIL, node)

    def _push_trace_failures(self, failures: FailureModel) -> None:
        index = {name: i for i, name in enumerate(self.cluster.names)}
        for time_s, name in failures.trace_failures:
            if name not in index:
                raise SpecError("trace_failures", name, "names no node of the cluster")
            if time_s < 0 or not math.isfinite(time_s):
                raise SpecError("trace_failures", time_s, "times must be finite and >= 0")
            self._push(float(time_s), FAIL, index[name])

    def _sample(self) -> None:
        c = self.cluster
        free = c.gpu_free_milli[c.schedulable]
        free_total = int(free.sum())
        partial = int(free[(free > 0) & (free < GPU_MILLI)].sum())
        row: dict[str, float] = {
            "time_s": self.now,
            "gpu_alloc_frac": c.allocated_gpu_milli() / max(self.total_milli, 1),
            "partial_gpu_free_frac": partial / free_total if free_total else 0.0,
            "nodes_up": float(c.schedulable.sum()),
            "pending_jobs": float(len(self._pending)),
            "running_jobs": float(len(self._running)),
        }
        for t, name in enumerate(self._jobs.tenant_names):
            row[f"gpus_{name}"] = self._tenant_milli[t] / GPU_MILLI
        self.samples.append(row)

    def _check(self) -> None:
        """The books balance: free + what running jobs hold = capacity, slot by slot; no job is
        both waiting and running; none is lost."""
        c = self.cluster
        used = np.zeros_like(c.gpu_free_milli)
        cpu = np.zeros_like(c.cpu_free)
        for placement in self.where.values():
            for node, slots, cpu_milli in zip(
                placement.nodes, placement.gpu_slots, placement.cpu_milli, strict=True
            ):
                cpu[node] += cpu_milli
                for slot in slots:
                    used[node, slot] += placement.gpu_milli
        slot_cap = (np.arange(c.gpu_slots)[None, :] < c.gpu_count[:, None]) * GPU_MILLI
        assert np.array_equal(used + c.gpu_free_milli, slot_cap)
        assert np.array_equal(cpu + c.cpu_free, c.cpu_cap)
        c.check_aggregates()
        assert not set(self._pending) & set(self._running)
        borrowed = np.zeros_like(self._tenant_borrowed)
        for job in self._borrowed:
            borrowed[self._jobs.tenant[job]] += self.requests[job].gpu_demand_milli
        assert np.array_equal(borrowed, self._tenant_borrowed)
        ten = self._tenancy
        assert (borrowed <= ten.borrow_limit).all(), "a borrowing limit is exceeded"
        # Lenders' own use since admission only lowers what they offer, so the tree must
        # serve the borrowed GPUs from the lending limits alone (own use taken as nil).
        assert borrowing_fits(ten, borrowed, borrowed), "a lending limit is exceeded"
        self._check_flavors()

    def _check_flavors(self) -> None:
        """Per flavor, the GPUs each tenant holds and borrows match its jobs, and the limits
        hold as for the whole quota."""
        held = np.zeros_like(self._tenant_flavor)
        borrowed = np.zeros_like(self._tenant_flavor)
        for job, placement in self.where.items():
            tenant = self._jobs.tenant[job]
            for node, slots in zip(placement.nodes, placement.gpu_slots, strict=True):
                model = int(self.cluster.node_model[node])
                flavor = int(self._flavor_of_model[model]) if model >= 0 else -1
                if flavor >= 0:
                    held[tenant, flavor] += len(slots) * placement.gpu_milli
                    if job in self._borrowed:
                        borrowed[tenant, flavor] += len(slots) * placement.gpu_milli
        assert np.array_equal(held, self._tenant_flavor)
        assert np.array_equal(borrowed, self._tenant_flavor_borrowed)
        for k, ten in enumerate(self._tenancy.by_flavor):
            assert (borrowed[:, k] <= ten.borrow_limit).all(), "a flavor's borrowing limit"
            assert borrowing_fits(ten, borrowed[:, k], borrowed[:, k]), "a flavor's lending"
        done = int(np.isfinite(self.state.end_s).sum() + self.state.skipped.sum())
        arrived = len(self._jobs) - self.arrivals_left
        assert len(self._pending) + len(self._running) + done == arrived

    def run(self) -> None:
        """Run to the end: every job finished, or nothing left that can ever start."""
        never = self._never_fit()
        self.state.skipped[never] = True
        self.arrivals_left -= len(never)
        for job in np.flatnonzero(~self.state.skipped).tolist():
            self._push(float(self._jobs.submit_s[job]), ARRIVE, job)
        failures = self.config.failures
        if failures is not None:
            if failures.spare_nodes >= self.cluster.num_nodes:
                raise SpecError("spare_nodes", failures.spare_nodes, "must be below the node count")
            self.spares = list(
                range(self.cluster.num_nodes - failures.spare_nodes, self.cluster.num_nodes)
            )
            for spare in self.spares:
                self.cluster.set_schedulable(spare, False)
            for node in range(self.cluster.num_nodes - failures.spare_nodes):
                self._schedule_failure(node)
            self._push_trace_failures(failures)
        self._push(0.0, SAMPLE, 0)
        work_left = len(self._jobs) - len(never)
        while self.heap and work_left:
            time_s, kind, _, arg, epoch = heapq.heappop(self.heap)
            assert time_s >= self.now
            self.now = time_s
            if kind == FINISH:
                if epoch != self.state.epoch[arg]:
                    pass  # stale: the job stopped meanwhile
                elif self.state.recorded_hit[arg]:
                    self._recorded_fail(arg)
                else:
                    self._finish(arg)
                    work_left -= 1
            elif kind == ARRIVE:
                self.arrivals_left -= 1
                self._pending_add(arg)
                self._dirty = True
                self.events.append((self.now, "arrive", arg))
            elif kind == FAIL:
                if arg not in self.isolated and self.cluster.schedulable[arg]:
                    self._fail(arg)
            elif kind == REPAIR:
                self.repairs_pending -= 1
                self.cluster.set_schedulable(arg, True)
                self._dirty = True
                self._schedule_failure(arg)
                self.events.append((self.now, "node_repair", arg))
            else:
                self._sample()
                self._push(self.now + self.config.sample_interval_s, SAMPLE, 0)
                if self.progress is not None:
                    self.progress(self.now)
            if self._dirty and (not self.heap or self.heap[0][0] > self.now):
                self._dirty = False
                self.queue.schedule(self)  # once per instant, after all its events
            if self.config.check_invariants:
                self._check()
            if self._pending and not self._waited_long:
                self._warn_long_wait()
            if self._stuck():
                self.warnings.append(
                    f"queue stuck at {self.now:.0f} s: {len(self._pending)} waiting jobs cannot "
                    "start and nothing running, arriving or under repair will change that"
                )
                break
        self._sample()

    def _warn_long_wait(self) -> None:
        oldest = self._pending[0]  # job indices grow with submit time
        waited = self.now - float(self._jobs.submit_s[oldest])
        if waited >= self.config.long_wait_warning_s:
            self._waited_long = True
            self.warnings.append(
                f"job {self._jobs.job_id[oldest]} ({self._jobs.num_gpu[oldest]} GPUs) had "
                f"waited {waited / DAY_S:.1f} days at {self.now:.0f} s with "
                f"{len(self._pending)} jobs waiting"
            )

    def _never_fit(self) -> npt.NDArray[np.int64]:
        """Jobs whose shape fits no node or gang of the empty cluster; rejected or warned of."""
        shapes = np.array([r.shape_id for r in self.requests], dtype=np.int64)
        first = {int(s): j for j, s in reversed(list(enumerate(shapes.tolist())))}
        fresh = self.cluster.copy_fresh()
        bad = [s for s, j in first.items() if not fits_when_empty(fresh, self.requests[j])]
        never = np.flatnonzero(np.isin(shapes, bad))
        if never.size == 0:
            return never
        job = int(never[0])
        what = (
            f"job {self._jobs.job_id[job]} asks {self._jobs.num_gpu[job]} GPUs "
            f"x {self._jobs.gpu_milli[job]} milli-GPU, {self._jobs.cpu_milli[job]} milli-CPU; "
            f"the cluster has {self.cluster.total_gpus} GPUs, {self.cluster.gpu_slots} a node"
        )
        request = self.requests[job]
        if request.workers:
            what += f"; {request.workers} workers x {request.gpus_per_worker} GPUs, one node each"
        if request.topology_required:
            what += f"; all within one {TOPOLOGY_LEVELS[request.topology_level]}"
        if self.config.never_fit == "reject":
            raise SpecError("never_fit", "reject", f"{never.size} jobs can never fit: {what}")
        self.warnings.append(f"{never.size} jobs can never fit and were skipped ({what})")
        return never

    def _stuck(self) -> bool:
        """Nothing runs, nothing will arrive or return, and the queue cannot move."""
        if self._running or not self._pending or (self.heap and self.heap[0][0] == self.now):
            return False
        return self.arrivals_left == 0 and self.repairs_pending == 0
