"""The plan space: every enumerated plan is valid, and none that the rules allow is missing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scalewall import catalog
from scalewall.errors import SpecError
from scalewall.plan.plan import ParallelPlan, validate
from scalewall.search import SearchSpace, enumerate_plans, stage_splits
from scalewall.search.space import divisors

LLAMA3_8B = catalog.model("llama3-8b")


def test_llama3_405b_split_matches_the_paper() -> None:
    # Llama 3 405B: 126 layers on 16 stages, first and last one layer fewer (arXiv 2407.21783).
    assert (7, 8, 7) in stage_splits(126, 16, 2)
    assert stage_splits(126, 1, 2) == [(126, 0, 126)]
    assert stage_splits(4, 5, 2) == []


@given(
    layers=st.integers(min_value=1, max_value=130),
    pp=st.integers(min_value=2, max_value=64),
    trim=st.integers(min_value=0, max_value=3),
)
def test_splits_add_up_and_respect_the_trim(layers: int, pp: int, trim: int) -> None:
    for first, middle, last in stage_splits(layers, pp, trim):
        assert first + (pp - 2) * middle + last == layers
        assert first >= 1 and last >= 1
        if pp > 2:
            assert middle - trim <= min(first, last) and max(first, last) <= middle


@settings(max_examples=25, deadline=None)
@given(
    gpus=st.sampled_from([1, 2, 4, 6, 8, 12, 16, 24, 32, 48]),
    global_batch=st.sampled_from([8, 16, 24, 64]),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_every_enumerated_plan_validates(gpus: int, global_batch: int, seed: int) -> None:
    try:
        batch = enumerate_plans(LLAMA3_8B, gpus, 8, global_batch, 4096)
    except SpecError:
        return
    rows = np.random.default_rng(seed).choice(len(batch), size=min(50, len(batch)), replace=False)
    for row in rows:
        validate(LLAMA3_8B, batch.plan(int(row)), gpus)


def test_even_split_plans_are_all_there() -> None:
    """Brute force over every field with even stages, filtered by validate and the space's
    bounds, gives exactly the enumerated even-split plans."""
    gpus, gb, seq = 16, 32, 4096
    space = SearchSpace(
        recompute=("none",), zero=(1,), sequence_parallel=(True,), cp_modes=("ring",)
    )
    batch = enumerate_plans(LLAMA3_8B, gpus, 8, gb, seq, space)
    same_ends = batch.layers_first == batch.layers_last
    even = (batch.pp == 1) | (
        same_ends & ((batch.pp == 2) | (batch.layers_first == batch.layers_middle))
    )
    got = {
        (
            int(batch.tp[i]),
            int(batch.pp[i]),
            int(batch.cp[i]),
            int(batch.micro_batch[i]),
            int(batch.vpp[i]),
        )
        for i in np.flatnonzero(even)
    }
    expected = set()
    for tp, pp, cp, mb, vpp in itertools.product(
        divisors(gpus), divisors(gpus), divisors(gpus), range(1, 17), range(1, 17)
    ):
        if gpus % (tp * pp * cp) or tp > 8:
            continue
        plan = ParallelPlan(
            tp=tp,
            pp=pp,
            cp=cp,
            dp=gpus // (tp * pp * cp),
            micro_batch=mb,
            vpp=vpp,
            global_batch=gb,
            seq_len=seq,
            sequence_parallel=tp > 1,
        )
        try:
            validate(LLAMA3_8B, plan, gpus)
        except SpecError:
            continue
        expected.add((tp, pp, cp, mb, vpp))
    assert got == expected


def test_sequence_parallel_and_cp_mode_are_not_duplicated() -> None:
    batch = enumerate_plans(LLAMA3_8B, 8, 8, 64, 4096)
    assert not np.any((batch.sequence_parallel > 0) & (batch.tp == 1))
    assert not np.any((batch.cp_mode > 0) & (batch.cp == 1))


def test_tp_stays_in_the_scale_up_domain_unless_asked() -> None:
    assert enumerate_plans(LLAMA3_8B, 32, 8, 64, 4096).tp.max() == 8
    wide = enumerate_plans(LLAMA3_8B, 32, 8, 64, 4096, SearchSpace(tp_beyond_scale_up=True))
    assert wide.tp.max() == 32


def test_filters_restrict_the_space() -> None:
    space = SearchSpace(tp_values=(4,), pp_values=(2,), cp_values=(1,))
    batch = enumerate_plans(LLAMA3_8B, 64, 8, 64, 4096, space)
    assert set(batch.tp) == {4.0} and set(batch.pp) == {2.0} and set(batch.cp) == {1.0}


def test_micro_batch_filter_keeps_only_the_given_micro_batches() -> None:
    free = enumerate_plans(LLAMA3_8B, 64, 8, 64, 4096)
    held = enumerate_plans(LLAMA3_8B, 64, 8, 64, 4096, SearchSpace(micro_batch_values=(2,)))
    assert len(set(free.micro_batch)) > 1
    assert set(held.micro_batch) == {2.0}
    # The rows kept are exactly the free enumeration's rows at that micro-batch.
    assert len(held) == int(np.sum(free.micro_batch == 2))
    with pytest.raises(SpecError, match="micro_batch_values"):
        SearchSpace(micro_batch_values=(0,))


def test_batch_errors_name_the_batch() -> None:
    with pytest.raises(SpecError, match="too small"):
        enumerate_plans(catalog.model("llama3-70b"), 32768, 8, 2, 8192)
    with pytest.raises(SpecError, match="cannot be split"):
        enumerate_plans(LLAMA3_8B, 13, 8, 2048, 8192)


def test_bad_space_is_a_spec_error() -> None:
    with pytest.raises(SpecError):
        SearchSpace(precisions=("fp4",))
    with pytest.raises(SpecError):
        SearchSpace(max_cp=0)
