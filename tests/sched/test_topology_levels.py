"""Gang jobs with a per-worker shape and a required or preferred topology level."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sched.frames import job_frame

from scalewall import sched
from scalewall.errors import SpecError
from scalewall.sched.cluster import Cluster, Placement
from scalewall.sched.jobs import Request, job_table
from scalewall.sched.policies.base import make_placement, placement_names


def _frame(num_gpu: list[int], run_s: float = 1000.0, **gang: list[object]) -> pd.DataFrame:
    return job_frame(num_gpu, run_s=run_s, **gang)


def _two_racks() -> Cluster:
    """Two racks of two 8-GPU nodes (16 GPUs a rack), one pod."""
    return sched.synthetic_cluster(num_nodes=4, gpus_per_node=8, nodes_per_rack=2)


def _take(cluster: Cluster, node: int, gpus: int) -> None:
    """Occupy ``gpus`` whole GPUs of ``node`` (its lowest free slots)."""
    slots = tuple(int(s) for s in np.flatnonzero(cluster.gpu_free_milli[node] == 1000)[:gpus])
    cluster.allocate(
        Placement(
            nodes=(node,), gpu_slots=(slots,), gpu_milli=1000, cpu_milli=(0,), memory_bytes=(0,)
        )
    )


def _request(cluster: Cluster, num_gpu: int, **gang: object) -> Request:
    frame = _frame([num_gpu], **{k: [v] for k, v in gang.items()})
    return job_table(frame).requests(cluster)[0]


def _placements(cluster: Cluster, request: Request) -> dict[str, Placement | None]:
    """Every registered placement policy's answer for ``request``."""
    table = job_table(_frame([request.num_gpu]))
    found = {}
    for name in placement_names():
        policy = make_placement(name)
        policy.prepare(cluster, table, np.random.default_rng(0))
        found[name] = policy.place(cluster, request)
    return found


def test_a_worker_never_straddles_nodes() -> None:
    cluster = sched.synthetic_cluster(num_nodes=3, gpus_per_node=8)
    _take(cluster, 0, 2)  # free 6
    _take(cluster, 1, 3)  # free 5: no room for a 6-GPU worker
    request = _request(cluster, 12, workers=2, gpus_per_worker=6)
    for name, placement in _placements(cluster, request).items():
        assert placement is not None, name
        assert sorted(placement.nodes) == [0, 2], name
        assert all(len(s) == 6 for s in placement.gpu_slots), name
    # Without the shape the same 12 GPUs spread over any nodes; with it, 5 + 5 + 5 free GPUs
    # hold no two 6-GPU workers, so the gang waits.
    _take(cluster, 0, 1)
    _take(cluster, 2, 3)
    assert all(p is None for p in _placements(cluster, request).values())
    assert all(p is not None for p in _placements(cluster, _request(cluster, 12)).values())


def test_workers_take_whole_multiples_per_node() -> None:
    cluster = sched.synthetic_cluster(num_nodes=4, gpus_per_node=8)
    for node, used in enumerate((1, 3, 5, 0)):
        _take(cluster, node, used)
    request = _request(cluster, 16, gpus_per_worker=4)  # workers derived: 4
    assert request.workers == 4
    for name, placement in _placements(cluster, request).items():
        assert placement is not None, name
        assert sum(len(s) for s in placement.gpu_slots) == 16, name
        assert all(len(s) % 4 == 0 for s in placement.gpu_slots), name


def test_required_rack_waits_rather_than_spanning_racks() -> None:
    cluster = _two_racks()
    _take(cluster, 0, 4)  # rack 0: 12 free
    _take(cluster, 2, 4)  # rack 1: 12 free
    required = _request(
        cluster, 16, workers=4, gpus_per_worker=4, topology_level="rack", topology_required=True
    )
    assert all(p is None for p in _placements(cluster, required).values())


def test_preferred_rack_spans_when_it_must_and_stays_in_one_when_it_can() -> None:
    cluster = _two_racks()
    _take(cluster, 0, 4)
    _take(cluster, 2, 4)
    preferred = _request(cluster, 16, workers=4, gpus_per_worker=4, topology_level="rack")
    for name, placement in _placements(cluster, preferred).items():
        assert placement is not None, name
        assert len({int(cluster.rack[n]) for n in placement.nodes}) == 2, name
    cluster.release(
        Placement(
            nodes=(2,),
            gpu_slots=((0, 1, 2, 3),),
            gpu_milli=1000,
            cpu_milli=(0,),
            memory_bytes=(0,),
        )
    )  # rack 1 whole again: the gang fits there
    for name, placement in _placements(cluster, preferred).items():
        assert placement is not None, name
        assert {int(cluster.rack[n]) for n in placement.nodes} == {1}, name


def test_required_node_level_keeps_the_workers_together() -> None:
    cluster = sched.synthetic_cluster(num_nodes=2, gpus_per_node=8)
    _take(cluster, 0, 4)
    _take(cluster, 1, 4)
    shape = {"workers": 2, "gpus_per_worker": 4, "topology_level": "node"}
    apart = _request(cluster, 8, **shape)
    together = _request(cluster, 8, **shape, topology_required=True)
    assert all(p is not None and len(p.nodes) == 2 for p in _placements(cluster, apart).values())
    assert all(p is None for p in _placements(cluster, together).values())


def test_simulated_required_gang_waits_and_preferred_starts() -> None:
    # j0 and j1 (3 x 4 GPUs, rack required) each fill 12 of a rack's 16 GPUs, leaving 4 + 4.
    def frame(required: bool) -> pd.DataFrame:
        return _frame(
            [12, 12, 8],
            workers=[3, 3, 2],
            gpus_per_worker=[4, 4, 4],
            topology_level=["rack"] * 3,
            topology_required=[True, True, required],
        )

    for placement in ("bestfit", "topology", "fgd"):
        waited = sched.simulate(_two_racks(), frame(True), placement=placement).jobs
        spread = sched.simulate(_two_racks(), frame(False), placement=placement).jobs
        # j2 waits for the first of j0, j1 to end (run time stretched by the tiers crossed).
        first_end = float(waited["end_s"][:2].min())
        assert first_end >= 1000.0
        assert list(waited["first_start_s"]) == [0.0, 1.0, first_end], placement
        assert list(spread["first_start_s"]) == [0.0, 1.0, 2.0], placement


def test_a_required_level_no_group_can_hold_is_never_fit() -> None:
    frame = _frame([24, 24], topology_level=["rack", "rack"], topology_required=[True, False])
    result = sched.simulate(_two_racks(), frame)
    assert list(result.jobs["skipped"]) == [True, False]
    assert result.summary["unfinished"] == 0
    assert "all within one rack" in result.summary["warnings"][0]


def test_default_gang_columns_keep_the_schedule() -> None:
    gpus = [8, 12, 4, 16, 2, 24, 8, 1]
    cluster = sched.synthetic_cluster(num_nodes=6, gpus_per_node=8, nodes_per_rack=2)
    plain = sched.simulate(cluster, _frame(gpus, run_s=700.0), placement="topology").jobs
    blank = _frame(
        gpus,
        run_s=700.0,
        workers=[0] * 8,
        gpus_per_worker=[np.nan] * 8,
        topology_level=[""] * 8,
        topology_required=[False] * 8,
    )
    again = sched.simulate(cluster.copy_fresh(), blank, placement="topology").jobs
    pd.testing.assert_frame_equal(plain, again)


def test_one_shape_column_is_derived_from_the_other_row_by_row() -> None:
    frame = _frame([8, 16, 4], workers=[2, np.nan, 0], gpus_per_worker=[np.nan, 8, np.nan])
    gang = job_table(frame).gang
    assert gang is not None
    assert list(gang.workers) == [2, 2, 0] and list(gang.gpus_per_worker) == [4, 8, 0]
    frame = _frame([8], workers=[np.nan], gpus_per_worker=[3])
    with pytest.raises(SpecError, match="gpus_per_worker=3"):
        job_table(frame)


def test_gang_columns_survive_the_job_table_round_trip() -> None:
    frame = _frame([8, 4], workers=[2, 0], topology_level=["rack", ""])
    back = job_table(job_table(frame).to_frame())
    assert back.gang is not None
    assert list(back.gang.workers) == [2, 0] and list(back.gang.gpus_per_worker) == [4, 0]
    assert list(back.gang.topology_level) == [3, 0]


@pytest.mark.parametrize(
    ("column", "value", "num_gpu", "needle"),
    [
        ("workers", 3, 8, "workers x gpus_per_worker must equal num_gpu (8)"),
        ("gpus_per_worker", -2, 8, "must be a positive integer"),
        ("workers", "two", 8, "must be a positive integer"),
        ("topology_level", "zone", 8, "valid: '', 'node', 'domain', 'rack', 'pod'"),
        ("topology_required", "maybe", 8, "valid: true or false"),
        ("topology_required", True, 8, "needs a topology_level"),
    ],
)
def test_bad_gang_values_give_one_line(
    column: str, value: object, num_gpu: int, needle: str
) -> None:
    with pytest.raises(SpecError) as err:
        job_table(_frame([num_gpu], **{column: [value]}))
    text = str(err.value)
    assert column in text and str(value) in text and needle in text
    assert "\n" not in text


@settings(max_examples=40, deadline=None)
@given(
    used=st.lists(st.integers(0, 8), min_size=8, max_size=8),
    per=st.sampled_from([1, 2, 4, 8]),
    workers=st.integers(1, 8),
    level=st.sampled_from(["", "node", "domain", "rack", "pod"]),
    required=st.booleans(),
)
def test_shaped_placements_keep_workers_whole_and_required_levels(
    used: list[int], per: int, workers: int, level: str, required: bool
) -> None:
    """On any occupancy, a shaped placement gives each node whole workers, stays in one group
    of a required level, and is missing only when no such placement exists."""
    cluster = sched.synthetic_cluster(
        num_nodes=8, gpus_per_node=8, nodes_per_rack=2, racks_per_pod=2
    )
    for node, gpus in enumerate(used):
        _take(cluster, node, gpus)
    gang = {"workers": workers, "gpus_per_worker": per, "topology_level": level}
    request = _request(cluster, workers * per, **gang, topology_required=required and bool(level))
    free_workers = (8 - np.array(used)) // per
    for name, placement in _placements(cluster, request).items():
        if placement is None:
            if required and level:
                group = cluster.level_group(request.topology_level)
                room = np.bincount(group, weights=free_workers)
                assert room.max() < workers, name
            else:
                assert free_workers.sum() < workers, name
            continue
        assert all(len(s) % per == 0 for s in placement.gpu_slots), name
        assert sum(len(s) for s in placement.gpu_slots) == workers * per, name
        if required and level:
            group = cluster.level_group(request.topology_level)
            assert len({int(group[n]) for n in placement.nodes}) == 1, name
        cluster.allocate(placement)  # asserts no slot is booked twice
        cluster.release(placement)
