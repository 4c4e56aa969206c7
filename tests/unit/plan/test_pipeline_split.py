"""The default pipeline split: valid for any layer count at any pp and vpp, and exact on the
layouts Megatron-Core's rules give."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.errors import SpecError
from scalewall.plan.plan import (
    ParallelPlan,
    balanced_stage_split,
    default_stage_split,
    pipeline_layout,
    rule_stage_split,
    stage_layers,
    validate,
)
from scalewall.validation.harness import candidate_splits


def _plan(layers: int, pp: int, vpp: int) -> tuple[ModelSpec, ParallelPlan]:
    model = replace(catalog.model("llama3-70b"), layers=layers)
    first, last = default_stage_split(layers, pp)
    # 2 pp micro-batches per replica: interleaving needs a multiple of pp
    plan = ParallelPlan(
        pp=pp,
        vpp=vpp,
        global_batch=2 * pp,
        first_stage_layers=first,
        last_stage_layers=last,
    )
    return model, plan


@pytest.mark.parametrize("layers", [61, 95, 126])
@pytest.mark.parametrize("pp", [8, 16])
@pytest.mark.parametrize("vpp", [1, 2])
def test_default_split_is_valid_and_adds_up(layers: int, pp: int, vpp: int) -> None:
    model, plan = _plan(layers, pp, vpp)
    validate(model, plan)
    layout = pipeline_layout(model, plan)
    assert len(layout) == pp
    assert sum(layout) == layers
    assert min(layout) >= 1
    # Embedding and loss count as a layer each: no stage holds more than an even share of the
    # layers + 2 units.
    units = [layout[0] + 1, *layout[1:-1], layout[-1] + 1]
    assert max(units) == math.ceil((layers + 2) / pp)
    first, middle, last = stage_layers(model, plan)
    assert (first, middle, last) == (layout[0], max(layout[1:-1]), layout[-1])


@pytest.mark.parametrize(
    ("layers", "pp", "expected"),
    [
        (61, 8, (7, 8, 8, 8, 8, 8, 8, 6)),  # the split Megatron-Bridge's DeepSeek-V3 recipe gives
        (61, 16, (3, *[4] * 14, 2)),
        (126, 16, (7, *[8] * 14, 7)),  # Llama 3 405B: (L + 2) / pp = 8, first and last 7
        (95, 8, (12, *[12] * 6, 11)),  # L + 1 divides: only the loss counts
        (96, 8, (12,) * 8),  # pp divides: even, no accounting
    ],
)
def test_default_split_layouts(layers: int, pp: int, expected: tuple[int, ...]) -> None:
    model, plan = _plan(layers, pp, 1)
    assert pipeline_layout(model, plan) == expected


def test_first_stage_alone_shares_the_rest() -> None:
    """decoder_first_pipeline_num_layers alone: the other stages share the rest, the last the
    lighter share."""
    model = replace(catalog.model("llama3-70b"), layers=61)
    plan = ParallelPlan(pp=4, first_stage_layers=13)
    assert pipeline_layout(model, plan) == (13, 16, 16, 16)
    plan = ParallelPlan(pp=4, last_stage_layers=10)
    assert pipeline_layout(model, plan) == (17, 17, 17, 10)


def test_too_many_stages_is_an_error() -> None:
    with pytest.raises(SpecError):
        default_stage_split(5, 8)


def test_rule_split_only_where_a_megatron_rule_divides() -> None:
    assert rule_stage_split(80, 8) == (0, 0)
    assert rule_stage_split(95, 8) == (12, 11)  # loss counted: 96 units
    assert rule_stage_split(94, 8) == (11, 11)  # embedding and loss counted: 96 units
    assert rule_stage_split(61, 16) is None


def test_open_split_candidates() -> None:
    # A rule that divides is what the run used: one candidate.
    assert candidate_splits(94, 8) == [default_stage_split(94, 8)]
    # None divides (DeepSeek-V3's 61 layers on 16 stages): Megatron-Core's fallback first, then
    # every split with 4-layer middle stages, among them (4, 1), the recipes' layout.
    splits = candidate_splits(61, 16)
    assert splits[0] == default_stage_split(61, 16)
    assert set(splits) == {(1, 4), (2, 3), (3, 2), (4, 1)}
    model = replace(catalog.model("llama3-70b"), layers=61)
    for first, last in splits:
        plan = ParallelPlan(pp=16, first_stage_layers=first, last_stage_layers=last)
        assert sum(pipeline_layout(model, plan)) == 61
        assert max(pipeline_layout(model, plan)) == 4


def test_nanotron_balances_the_output_layer_against_the_decoder_layers() -> None:
    """nanotron's walk over block costs (a decoder layer 4 h^2 + 3 h F, the output layer V h)
    on Llama 3.1 8B (32 layers, hidden 4,096, FFN 14,336, vocab 128,256: the output layer
    costs 2.16 layers): on 4 stages the thresholds fall after layers 9, 18 and 26, so the
    stages hold 9, 9, 8 and 6 layers with the output layer; on 8 stages the first holds 5 and
    the last 2 with it. Megatron-Core's rules would split both evenly."""
    model = catalog.model("llama3.1-8b")
    assert balanced_stage_split(model, 1) == (0, 0)
    assert balanced_stage_split(model, 4) == (9, 6)
    assert balanced_stage_split(model, 8) == (5, 2)
    assert default_stage_split(model.layers, 4) == (0, 0)
    # A stage closes only once the running total passes its share, so even with a negligible
    # output layer the first stage takes the layer that reaches its share: 9, 8, 8, 7.
    small_vocab = replace(model, vocab=256)
    assert balanced_stage_split(small_vocab, 4) == (9, 7)
    for pp in (2, 4, 8, 16):
        first, last = balanced_stage_split(model, pp)
        plan = ParallelPlan(pp=pp, first_stage_layers=first, last_stage_layers=last)
        assert sum(pipeline_layout(model, plan)) == model.layers
