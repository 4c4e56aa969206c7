"""Hugging Face nanotron benchmark runs from "The Ultra-Scale Playbook" (Tazi et al., 2025):
Llama-style 1B, 3B and 8B models at 4,096 tokens and a 1M-token global batch on 1-64 nodes of
8 H100, stated with the ``nanotron`` stack, the published DP/TP/PP/ZeRO and micro-batch, and
the network left open (the playbook does not describe it). No constant was fitted to them.

On 1-4 nodes the model follows nanotron (MAPE 6.9% with nanotron's compute-balanced
pipeline split, ``Stack.pipeline_split``; 8.5% with Megatron-Core's split). From 8 nodes on it is
increasingly fast, up to 3x at 64 nodes. The playbook's own measurement of its cluster
(figure "Communication Bandwidth by Number of Nodes", 256 MB messages) shows why: all-reduce
bus bandwidth falls from 436 GB/s on one node to 100 GB/s on 8, 65 on 32 and 33 on 64 nodes
(all-gather 250 -> 11 GB/s), where the catalog's default NDR fat tree keeps about 200 GB/s.
The stated fields carry nothing of that network, so the rows stay a strict expected failure."""

from __future__ import annotations

import numpy as np
import pytest
from tests.validation.predictions import predict_file

from scalewall.validation.harness import CasePrediction
from scalewall.validation.runs import nanotron_playbook_runs_path


@pytest.fixture(scope="module")
def predictions() -> dict[str, CasePrediction]:
    return predict_file(nanotron_playbook_runs_path())


def _error(p: CasePrediction) -> float:
    published = float(p.case.published["tokens_per_s_per_gpu"])
    return p.row["tokens_per_s"] / p.case.hardware["gpus"] / published - 1.0


def _nodes(p: CasePrediction) -> int:
    return int(p.case.hardware["gpus"]) // int(p.case.hardware["gpus_per_node"])


def test_every_row_is_predicted_and_fits(predictions: dict[str, CasePrediction]) -> None:
    assert len(predictions) == 34
    assert all(p.fits for p in predictions.values())


def test_rows_up_to_four_nodes(predictions: dict[str, CasePrediction]) -> None:
    errors = [_error(p) for p in predictions.values() if _nodes(p) <= 4]
    assert len(errors) == 23
    assert float(np.mean(np.abs(errors))) <= 0.10, errors


@pytest.mark.xfail(
    strict=True,
    reason="the playbook's cluster loses most of its collective bandwidth from 8 nodes on "
    "(all-reduce 436 -> 33 GB/s from 1 to 64 nodes, its own measurement); the stated run "
    "does not describe that network",
)
def test_rows_on_eight_nodes_and_more(predictions: dict[str, CasePrediction]) -> None:
    errors = [_error(p) for p in predictions.values() if _nodes(p) >= 8]
    assert all(abs(e) <= 0.20 for e in errors), errors
