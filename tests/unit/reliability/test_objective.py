"""The ``goodput_tokens_per_s`` search objective: registered, equal to `goodput` per plan, and
able to change the ranking when checkpoints are slow."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from scalewall import catalog
from scalewall.cluster import resolve_cluster
from scalewall.reliability import (
    CheckpointSpec,
    GoodputTokensPerSecond,
    goodput,
    goodput_model,
    storage_tier,
)
from scalewall.reliability.adapter import goodput_inputs
from scalewall.search import SearchSpace, objective, objective_names, search

CLUSTER = resolve_cluster(gpu="h100-sxm-80gb", gpus=1024)
# Plans that differ in who writes the checkpoint: ZeRO 0 leaves it to data-parallel replica 0,
# tp x pp = 32 ranks (4 nodes) with pp 8, 64 ranks (8 nodes) with pp 16.
REPLICA_WRITES = SearchSpace(zero=(0,), tp_values=(4,), pp_values=(8, 16))
BATCH = {"global_batch": 512, "seq_len": 4096}


def test_registered_under_its_name() -> None:
    assert "goodput_tokens_per_s" in objective_names()
    assert isinstance(objective("goodput_tokens_per_s"), GoodputTokensPerSecond)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_vector_form_equals_the_scalar_form(asynchronous: bool) -> None:
    inputs = goodput_inputs(
        catalog.model("llama3-70b"),
        CLUSTER,
        search("llama3-70b", CLUSTER, **BATCH, top_k=1).top[0].plan,
        run_s=30 * 86400.0,
        checkpoint=CheckpointSpec(asynchronous=asynchronous),
    )
    model, _, _, _ = goodput_model(inputs)
    taus = np.geomspace(1.0, 1e5, 9)
    expected = [model.goodput_frac(float(t)) for t in taus]
    assert model.goodput_fracs(taus) == pytest.approx(expected, rel=1e-12)


def test_score_is_tokens_per_s_times_goodput_of_each_plan() -> None:
    """Each top plan's score equals `goodput` of that plan at its own optimum interval; the
    tolerance is the interval optimiser's (goodput is flat at its optimum)."""
    obj = GoodputTokensPerSecond(storage="object-store")
    result = search("llama3-70b", CLUSTER, **BATCH, objective_name=obj, top_k=4)
    model = catalog.model("llama3-70b")
    for ranked in result.top:
        inputs = goodput_inputs(
            model,
            CLUSTER,
            ranked.plan,
            run_s=15e12 / ranked.tokens_per_s,
            step_s=ranked.step_time_s,
            storage="object-store",
        )
        frac = goodput(inputs).goodput_frac
        assert 0.5 < frac < 1.0
        assert ranked.score == pytest.approx(ranked.tokens_per_s * frac, rel=1e-6)


def test_slow_checkpoint_storage_changes_the_best_plan() -> None:
    """With node-local NVMe the fastest plan (pp 8, 4 writer nodes) stays best; at 25 MB/s per
    node its checkpoint takes twice as long as pp 16's (8 writer nodes), which then wins."""
    nvme = storage_tier("local-nvme")
    slow = replace(
        nvme, id="slow", write_bytes_per_s_per_node=2.5e7, read_bytes_per_s_per_node=2.5e7
    )
    kw = {**BATCH, "space": REPLICA_WRITES, "top_k": 1}
    raw = search("llama3-70b", CLUSTER, **kw).top[0]
    fast = search("llama3-70b", CLUSTER, objective_name=GoodputTokensPerSecond(storage=nvme), **kw)
    slowed = search(
        "llama3-70b", CLUSTER, objective_name=GoodputTokensPerSecond(storage=slow), **kw
    )
    assert raw.plan.pp == 8
    assert fast.top[0].plan == raw.plan
    assert slowed.top[0].plan.pp == 16
    assert slowed.top[0].tokens_per_s < raw.tokens_per_s


def test_a_fresh_interpreter_finds_it_by_name() -> None:
    """The search's registry loads the reliability objective itself: nothing imports it first."""
    code = (
        "from scalewall.search.objective import objective; "
        "print(objective('goodput_tokens_per_s').name)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "goodput_tokens_per_s"
