"""A small scenario (a 256-GPU slice against a 4,096-GPU cluster, sizes to 4,096) built once."""

from __future__ import annotations

import pytest

from scalewall.report import ClusterOption, Report, Scenario, build_report


def small_scenario() -> Scenario:
    return Scenario(
        title="small",
        model="llama3-8b",
        options=(
            ClusterOption(name="256 x H100", cluster="dgx-h100-superpod-1024", gpus=256),
            ClusterOption(name="4,096 x H100", cluster="h100-16k-ndr", gpus=4096),
        ),
        candidate_models=("llama3-8b", "llama3-70b"),
        sizes=(64, 256, 1024, 4096),
        growth=(256, 1024, 4096),
        token_budget=2e12,
        sched_jobs=100,
    )


@pytest.fixture(scope="session")
def small_report() -> Report:
    return build_report(small_scenario())
