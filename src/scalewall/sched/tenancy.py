"""Tenant queues as a platform team configures them (Kueue's ClusterQueues and cohorts).

Each tenant queue has a nominal GPU quota and belongs to a cohort. A queue may borrow its
cohort's unused nominal quota for jobs above its own, up to its ``borrowing_limit``; it lends
at most ``lending_limit`` of its nominal quota to the cohort (Kueue's ``borrowingLimit`` and
``lendingLimit``, https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/). A queue reclaims
lent quota by preempting borrowers (``quota`` policies). Queues come from a TOML file::

    [[queue]]
    name = "research"        # the trace's tenant
    cohort = "ml"            # default: "default"
    nominal_gpus = 64
    borrowing_limit = 32     # GPUs above nominal; default: no limit
    lending_limit = 16       # GPUs of nominal others may use; default: all of it
    priority = 1             # higher: its jobs are considered first; default 0

A queue may split its quota by GPU type (Kueue's ResourceFlavors,
https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/): one ``[[queue.flavor]]`` table per
GPU model of the cluster it may use, each with its own nominal quota and limits (the queue's
``nominal_gpus`` is then their sum, and may be left out). A job runs on one flavor: the first
in its queue's order that its ``gpu_models`` allow and that admits it within its nominal quota
or by borrowing; else the first where reclaiming lent quota makes room. A queue uses no flavor
it does not list; borrowing and lending, and the cohorts' limits, hold per flavor::

    [[queue]]
    name = "research"
    [[queue.flavor]]
    name = "A100"            # a GPU model of the cluster
    nominal_gpus = 32
    borrowing_limit = 8      # default: no limit
    lending_limit = 16       # default: all of it
    [[queue.flavor]]
    name = "H100"
    nominal_gpus = 16

Cohorts may nest (Kueue's cohorts of cohorts, Volcano's hierarchical queues). A ``[[cohort]]``
table names a cohort's parent and limits what the cohort as a whole takes from, and gives to,
the rest of its tree; a cohort no table names is a root without limits::

    [[cohort]]
    name = "ml"
    parent = "org"           # default: none (a root)
    nominal_gpus = 0         # quota the cohort holds itself, lent to its queues; default 0
    borrowing_limit = 16     # GPUs its queues together take from outside it; default: no limit
    lending_limit = 8        # GPUs of its unused quota lent outside it; default: all of it

Unused quota flows to siblings first, then up: a queue's borrowed GPUs are served by what its
own cohort's queues leave unused (each within its ``lending_limit``) and the cohort's own
quota; what they cannot serve the cohort borrows from its parent (within the cohort's
``borrowing_limit``), served by the parent's other children, and so on to the root, where
nothing is left to borrow (``borrowing_fits``).
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from scalewall.errors import SpecError

DEFAULT_COHORT = "default"
QUEUE_FIELDS = (
    "name",
    "cohort",
    "nominal_gpus",
    "borrowing_limit",
    "lending_limit",
    "priority",
    "flavor",
)
FLAVOR_FIELDS = ("name", "nominal_gpus", "borrowing_limit", "lending_limit")
COHORT_FIELDS = ("name", "parent", "nominal_gpus", "borrowing_limit", "lending_limit")


@dataclass(frozen=True, kw_only=True)
class FlavorQuota:
    """A queue's quota of one GPU type (a Kueue ResourceFlavor's quota in a ClusterQueue)."""

    name: str
    """The GPU model (the cluster's model name, as a job's ``gpu_models`` names it)."""
    nominal_gpus: float
    borrowing_limit: float = math.inf
    lending_limit: float = math.inf

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SpecError("name", self.name, "a GPU model of the cluster", where="flavor")
        fields = ("nominal_gpus", "borrowing_limit", "lending_limit")
        _check_gpus(self, fields, f"flavor {self.name!r}")


@dataclass(frozen=True, kw_only=True)
class TenantQueue:
    """One tenant's queue: quota, limits, cohort and priority."""

    name: str
    """The tenant (the trace's ``tenant`` column) whose jobs this queue admits."""
    nominal_gpus: float
    """GPUs guaranteed to the queue (reclaimed from borrowers when it needs them)."""
    cohort: str = DEFAULT_COHORT
    """Queues of one cohort borrow each other's unused nominal quota."""
    borrowing_limit: float = math.inf
    """Most GPUs the queue may hold above its nominal quota (inf: no limit)."""
    lending_limit: float = math.inf
    """Most GPUs of its nominal quota the cohort's other queues may borrow (inf: all)."""
    priority: int = 0
    """Queues with a higher priority have their pending jobs considered first."""
    flavors: tuple[FlavorQuota, ...] = ()
    """Quota per GPU type, in the order a job tries them (empty: one quota for any GPU)."""

    def __post_init__(self) -> None:
        where = f"queue {self.name!r}"
        names = [f.name for f in self.flavors]
        if len(set(names)) < len(names):
            raise SpecError("flavor", names, "each GPU model once per queue", where=where)
        total = sum(f.nominal_gpus for f in self.flavors)
        if self.flavors and not math.isclose(self.nominal_gpus, total):
            raise SpecError(
                "nominal_gpus", self.nominal_gpus, f"the flavors' sum ({total:g})", where=where
            )
        if not isinstance(self.name, str) or not self.name:
            raise SpecError("name", self.name, "a non-empty tenant name", where="queue")
        if not isinstance(self.cohort, str) or not self.cohort:
            raise SpecError("cohort", self.cohort, "a non-empty cohort name", where=where)
        _check_gpus(self, ("nominal_gpus", "borrowing_limit", "lending_limit"), where)
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise SpecError("priority", self.priority, "an integer", where=where)


@dataclass(frozen=True, kw_only=True)
class Cohort:
    """A cohort in a tree of cohorts: its parent and what it takes from and gives to the rest
    of the tree (Kueue's Cohort with ``parentName``, https://kueue.sigs.k8s.io/docs/concepts/
    cohort/)."""

    name: str
    parent: str | None = None
    """The cohort it borrows from and lends to (None: a root)."""
    nominal_gpus: float = 0.0
    """Quota the cohort holds itself, lent to its queues and child cohorts."""
    borrowing_limit: float = math.inf
    """Most GPUs its queues together hold beyond what the cohort's own subtree provides."""
    lending_limit: float = math.inf
    """Most GPUs of the subtree's unused quota lent to the rest of the tree."""

    def __post_init__(self) -> None:
        where = f"cohort {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise SpecError("name", self.name, "a non-empty cohort name", where="cohort")
        if self.parent is not None and (not isinstance(self.parent, str) or not self.parent):
            raise SpecError("parent", self.parent, "the name of another [[cohort]]", where=where)
        if self.parent == self.name:
            raise SpecError("parent", self.parent, "another cohort than itself", where=where)
        _check_gpus(self, ("nominal_gpus", "borrowing_limit", "lending_limit"), where)


def _check_gpus(spec: object, fields: tuple[str, ...], where: str) -> None:
    """Each field a number of GPUs >= 0; ``nominal_gpus`` finite."""
    for name in fields:
        value = getattr(spec, name)
        finite = name == "nominal_gpus"
        ok = _is_number(value) and value >= 0 and (math.isfinite(value) or not finite)
        if not ok:
            raise SpecError(name, value, "a number of GPUs >= 0", where=where)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


@dataclass(frozen=True, kw_only=True)
class Quotas:
    """A quota file: the tenants' queues and the cohorts that nest them."""

    queues: tuple[TenantQueue, ...]
    cohorts: tuple[Cohort, ...] = ()


def _rows(data: Mapping[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    rows = data.get(key, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise SpecError(key, rows, f"[[{key}]] tables", where=where)
    return rows


def _table(cls: type, row: dict[str, Any], fields: tuple[str, ...], at: str, what: str) -> Any:
    """One ``cls`` from a table: unknown fields and a missing name are one-line errors."""
    bad = sorted(set(row) - set(fields))
    if bad:
        raise SpecError(bad[0], row[bad[0]], f"valid: {', '.join(fields)}", where=at)
    if "name" not in row:
        raise SpecError("name", None, f"required: {what}", where=at)
    return cls(**row)


def _flavor(row: dict[str, Any], at: str) -> FlavorQuota:
    if "nominal_gpus" not in row:
        raise SpecError("nominal_gpus", None, "required: the flavor's quota", where=at)
    flavor: FlavorQuota = _table(FlavorQuota, row, FLAVOR_FIELDS, at, "the GPU model")
    return flavor


def quotas_from_mapping(data: Mapping[str, Any], *, where: str = "quotas") -> Quotas:
    """Queues and cohorts from a parsed quota file (``{"queue": [...], "cohort": [...]}``)."""
    unknown = sorted(set(data) - {"queue", "cohort"})
    if unknown:
        raise SpecError(
            unknown[0], data[unknown[0]], "valid top-level keys: [[queue]], [[cohort]]", where=where
        )
    rows = _rows(data, "queue", where)
    if not rows:
        raise SpecError("queue", rows or None, "one or more [[queue]] tables", where=where)
    queues = []
    for i, row in enumerate(rows):
        at = f"{where}: queue[{i}]"
        flavors = tuple(
            _flavor(f, f"{at}.flavor[{k}]") for k, f in enumerate(_rows(row, "flavor", at))
        )
        if "nominal_gpus" not in row and not flavors:
            raise SpecError("nominal_gpus", None, "required: the queue's GPU quota", where=at)
        total = {"nominal_gpus": sum(f.nominal_gpus for f in flavors)} if flavors else {}
        fields = total | {k: v for k, v in row.items() if k != "flavor"} | {"flavors": flavors}
        queues.append(_table(TenantQueue, fields, (*QUEUE_FIELDS, "flavors"), at, "the tenant"))
    cohorts = tuple(
        _table(Cohort, row, COHORT_FIELDS, f"{where}: cohort[{i}]", "the cohort's name")
        for i, row in enumerate(_rows(data, "cohort", where))
    )
    check_unique(queues, where=where)
    check_tree(cohorts, where=where)
    return Quotas(queues=tuple(queues), cohorts=cohorts)


def check_unique(queues: Iterable[TenantQueue], *, where: str = "quotas") -> None:
    """One queue per tenant."""
    seen: set[str] = set()
    for queue in queues:
        if queue.name in seen:
            raise SpecError("name", queue.name, "each tenant has one [[queue]]", where=where)
        seen.add(queue.name)


def check_tree(cohorts: Iterable[Cohort], *, where: str = "quotas") -> None:
    """One table per cohort; each parent a declared cohort; no cycle."""
    by_name: dict[str, Cohort] = {}
    for cohort in cohorts:
        if cohort.name in by_name:
            raise SpecError("name", cohort.name, "each cohort has one [[cohort]]", where=where)
        by_name[cohort.name] = cohort
    for cohort in by_name.values():
        at = f"{where}: cohort {cohort.name!r}"
        if cohort.parent is not None and cohort.parent not in by_name:
            valid = f"a [[cohort]] of the file ({', '.join(sorted(by_name))})"
            raise SpecError("parent", cohort.parent, valid, where=at)
        seen = {cohort.name}
        node = cohort
        while node.parent is not None:
            if node.parent in seen:
                raise SpecError("parent", cohort.parent, "a tree: this parent leads back", where=at)
            seen.add(node.parent)
            node = by_name[node.parent]


def load_quotas(path: Path) -> Quotas:
    """Queues and cohorts from a TOML quota file; one-line :class:`SpecError` on a bad file."""
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise SpecError("quotas", where, f"a readable TOML file ({err.strerror})") from err
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise SpecError("quotas", where, f"valid TOML ({err})") from err
    return quotas_from_mapping(data, where=where)


MILLI = 1000
"""Milli-GPU per GPU (as ``cluster.GPU_MILLI``; kept here so the file reader stays light)."""
NO_LIMIT = np.iinfo(np.int64).max // 4
"""An unlimited borrowing or lending limit in milli-GPU (far above any cluster, no overflow)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class Tenancy:
    """The queues of a replay's tenants as arrays (tenant index as the trace's tenants), and
    their cohorts' tree (cohort index: sorted names)."""

    quota: npt.NDArray[np.int64]
    """Nominal quota per tenant, milli-GPU."""
    borrow_limit: npt.NDArray[np.int64]
    lend_limit: npt.NDArray[np.int64]
    """Lendable part of the nominal quota: min(lending limit, nominal), milli-GPU."""
    cohort: npt.NDArray[np.int64]
    """Cohort index per tenant."""
    priority: npt.NDArray[np.int64]
    """Queue priority per tenant."""
    cohort_capacity: npt.NDArray[np.int64]
    """Sum of the nominal quotas of each cohort's queues (those without jobs too), milli-GPU."""
    cohort_idle_lendable: npt.NDArray[np.int64]
    """What each cohort's queues without jobs in the trace lend, plus the cohort's own
    quota, milli-GPU."""
    members: tuple[npt.NDArray[np.int64], ...]
    """Tenant indices of each cohort."""
    cohort_names: tuple[str, ...] = ()
    cohort_parent: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    """Parent cohort index (-1: a root)."""
    cohort_borrow_limit: npt.NDArray[np.int64] = field(
        default_factory=lambda: np.zeros(0, np.int64)
    )
    cohort_lend_limit: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    cohort_order: tuple[int, ...] = ()
    """Cohorts with every child before its parent (the order demand flows up in)."""
    ancestors: tuple[tuple[int, ...], ...] = ()
    """Per cohort: itself, its parent, ... up to its root."""
    flavors: tuple[str, ...] = ()
    """GPU types with quotas of their own (empty: one quota for any GPU)."""
    by_flavor: tuple[Tenancy, ...] = ()
    """Per flavor, the same arrays for that GPU type's quotas."""
    flavor_order: tuple[tuple[int, ...], ...] = ()
    """Per tenant, the flavors its queue lists, in its order."""

    @functools.cached_property
    def lists(self) -> _TreeLists:
        """The arrays as tuples, and each root's tree (``borrowing_fits``)."""
        return _tree_lists(self)


def _milli(gpus: float) -> int:
    return NO_LIMIT if math.isinf(gpus) else round(gpus * MILLI)


def build_tenancy(
    tenants: tuple[str, ...], queues: Iterable[TenantQueue], cohorts: Iterable[Cohort] = ()
) -> Tenancy:
    """Arrays for ``tenants``; a trace tenant without a queue is a one-line error. With
    flavors, ``by_flavor`` holds one :class:`Tenancy` per GPU type (the queues' quotas and
    limits of that type, the same cohort tree and limits, cohorts without own quota)."""
    queues, cohorts = tuple(queues), tuple(cohorts)
    total = _build_one(tenants, queues, cohorts)
    flavors = tuple(dict.fromkeys(f.name for q in queues for f in q.flavors))
    if not flavors:
        return total
    bare = [q.name for q in queues if not q.flavors]
    if bare:
        raise SpecError("flavor", bare[0], "every queue lists its [[queue.flavor]] when one does")
    by_flavor = []
    for name in flavors:
        split = tuple(_flavor_queue(q, name) for q in queues)
        by_flavor.append(
            _build_one(tenants, split, [replace(c, nominal_gpus=0.0) for c in cohorts])
        )
    by_name = {q.name: q for q in queues}
    order = tuple(tuple(flavors.index(f.name) for f in by_name[t].flavors) for t in tenants)
    return replace(total, flavors=flavors, by_flavor=tuple(by_flavor), flavor_order=order)


def _flavor_queue(queue: TenantQueue, flavor: str) -> TenantQueue:
    """The queue's quota and limits of one flavor; none at all for a flavor it does not list."""
    for f in queue.flavors:
        if f.name == flavor:
            return replace(
                queue,
                nominal_gpus=f.nominal_gpus,
                borrowing_limit=f.borrowing_limit,
                lending_limit=f.lending_limit,
                flavors=(),
            )
    return replace(queue, nominal_gpus=0.0, borrowing_limit=0.0, lending_limit=0.0, flavors=())


def _build_one(
    tenants: tuple[str, ...], queues: tuple[TenantQueue, ...], cohorts: Iterable[Cohort]
) -> Tenancy:
    by_name = {q.name: q for q in queues}
    missing = [t for t in tenants if t not in by_name]
    if missing:
        raise SpecError(
            "quotas",
            missing[0],
            f"every tenant of the trace needs a [[queue]] ({len(missing)} lack one)",
        )
    declared = {c.name: c for c in cohorts}
    check_tree(declared.values())
    names = sorted({q.cohort for q in by_name.values()} | set(declared))
    tree = [declared.get(c, Cohort(name=c)) for c in names]
    index = {c: i for i, c in enumerate(names)}
    rows = [by_name[t] for t in tenants]
    quota = np.array([_milli(q.nominal_gpus) for q in rows], dtype=np.int64)
    capacity = np.zeros(len(names), dtype=np.int64)
    idle = np.array([_milli(c.nominal_gpus) for c in tree], dtype=np.int64)
    for q in by_name.values():
        capacity[index[q.cohort]] += _milli(q.nominal_gpus)
        if q.name not in tenants:
            idle[index[q.cohort]] += min(_milli(q.lending_limit), _milli(q.nominal_gpus))
    cohort = np.array([index[q.cohort] for q in rows], dtype=np.int64)
    parent = np.array([index[c.parent] if c.parent else -1 for c in tree], dtype=np.int64)
    ancestors = tuple(_path_to_root(i, parent) for i in range(len(names)))
    return Tenancy(
        quota=quota,
        borrow_limit=np.array([_milli(q.borrowing_limit) for q in rows], dtype=np.int64),
        lend_limit=np.minimum(
            np.array([_milli(q.lending_limit) for q in rows], dtype=np.int64), quota
        ),
        cohort=cohort,
        priority=np.array([q.priority for q in rows], dtype=np.int64),
        cohort_capacity=capacity,
        cohort_idle_lendable=idle,
        members=tuple(np.flatnonzero(cohort == c).astype(np.int64) for c in range(len(names))),
        cohort_names=tuple(names),
        cohort_parent=parent,
        cohort_borrow_limit=np.array([_milli(c.borrowing_limit) for c in tree], dtype=np.int64),
        cohort_lend_limit=np.array([_milli(c.lending_limit) for c in tree], dtype=np.int64),
        # Deeper cohorts first: every child is deeper than its parent.
        cohort_order=tuple(sorted(range(len(names)), key=lambda c: -len(ancestors[c]))),
        ancestors=ancestors,
    )


def _path_to_root(cohort: int, parent: npt.NDArray[np.int64]) -> tuple[int, ...]:
    path = [cohort]
    while parent[path[-1]] >= 0:
        path.append(int(parent[path[-1]]))
    return tuple(path)


@dataclass(frozen=True, kw_only=True)
class _TreeLists:
    """A tenancy's arrays as Python tuples, and each root's tree, for the admission check
    (a few dozen queues: plain integer arithmetic beats numpy's per-call cost)."""

    quota: tuple[int, ...]
    lend: tuple[int, ...]
    cohort: tuple[int, ...]
    idle: tuple[int, ...]
    parent: tuple[int, ...]
    borrow_limit: tuple[int, ...]
    lend_limit: tuple[int, ...]
    tree_tenants: tuple[tuple[int, ...], ...]
    """Per cohort: the tenants of its root's tree."""
    tree_order: tuple[tuple[int, ...], ...]
    """Per cohort: the cohorts of its root's tree, children before parents."""


def _tree_lists(ten: Tenancy) -> _TreeLists:
    roots = [a[-1] for a in ten.ancestors]
    cohort = tuple(ten.cohort.tolist())
    return _TreeLists(
        quota=tuple(ten.quota.tolist()),
        lend=tuple(ten.lend_limit.tolist()),
        cohort=cohort,
        idle=tuple(ten.cohort_idle_lendable.tolist()),
        parent=tuple(ten.cohort_parent.tolist()),
        borrow_limit=tuple(ten.cohort_borrow_limit.tolist()),
        lend_limit=tuple(ten.cohort_lend_limit.tolist()),
        tree_tenants=tuple(
            tuple(t for t, c in enumerate(cohort) if roots[c] == roots[k])
            for k in range(len(roots))
        ),
        tree_order=tuple(
            tuple(c for c in ten.cohort_order if roots[c] == roots[k]) for k in range(len(roots))
        ),
    )


def borrowing_fits(
    ten: Tenancy,
    held: npt.NDArray[np.int64],
    borrowed: npt.NDArray[np.int64],
    *,
    tenant: int = -1,
    need: int = 0,
) -> bool:
    """True when every queue's borrowed GPUs are served by the tree, siblings first, then up
    (with ``tenant`` >= 0: after it borrows ``need`` more, checked on its root's tree).

    ``held``: milli-GPU each tenant holds; ``borrowed``: the part admitted above its nominal
    quota. A queue offers its cohort min(lending limit, nominal - own use); a cohort's demand is
    its queues' borrowed GPUs and its child cohorts' overflow, its supply its queues' and child
    cohorts' offers, its idle queues' and its own quota. Demand beyond supply overflows to the
    parent, at most the cohort's borrowing limit (a root has no parent: nothing may overflow);
    supply beyond demand is offered to the parent, at most the cohort's lending limit. With
    one level this is Kueue's flat cohort: borrowed <= sum of min(lending limit, unused)."""
    lists = ten.lists
    if tenant >= 0:
        root_of = lists.cohort[tenant]
        tenants, order = lists.tree_tenants[root_of], lists.tree_order[root_of]
    else:
        tenants, order = tuple(range(len(lists.quota))), ten.cohort_order
    held_l, borrowed_l = held.tolist(), borrowed.tolist()
    if tenant >= 0:
        held_l[tenant] += need
        borrowed_l[tenant] += need
    demand = [0] * len(lists.idle)
    supply = list(lists.idle)
    for t in tenants:
        c, b = lists.cohort[t], borrowed_l[t]
        demand[c] += b
        supply[c] += min(lists.lend[t], max(lists.quota[t] - (held_l[t] - b), 0))
    for c in order:
        over = demand[c] - supply[c]
        up = lists.parent[c]
        if over > 0:
            if up < 0 or over > lists.borrow_limit[c]:
                return False
            demand[up] += over
        elif up >= 0:
            supply[up] += min(-over, lists.lend_limit[c])
    return True


def jain_index(values: npt.NDArray[np.float64]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one takes
    all (Jain, Chiu and Hawe, "A Quantitative Measure of Fairness and Discrimination for
    Resource Allocation in Shared Computer Systems", DEC TR-301, 1984); nan without values."""
    x = values[np.isfinite(values)]
    square_sum = float((x**2).sum())
    return float(x.sum() ** 2 / (x.size * square_sum)) if x.size and square_sum else math.nan
