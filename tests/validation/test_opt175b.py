"""OPT-175B's restarts (Zhang et al., "OPT: Open Pre-trained Transformer Language Models",
arXiv 2205.01068, Sec. 2.5): at least 35 manual and about 70 automatic restarts on 992 80 GB A100
over two months, about 105 in all.

Predicted with the research-cluster profile (`kokolis-rsc1`: A100 fleet, same operator). Tolerance
a factor of 1.5: the automatic count is the paper's estimate, and the profile's job-level rates
are one fit over this figure and Kokolis et al.'s two job MTTFs.
"""

from __future__ import annotations

from scalewall.reliability import JobFootprint, failure_rates, interruption_rates
from scalewall.units import DAY_S

from .reliability_rows import write_rows

PUBLISHED_RESTARTS = 105
RUN_S = 61 * DAY_S
"""Two months."""
FACTOR = 1.5


def test_restart_count_within_factor_1_5() -> None:
    # Azure NDv4-class nodes: 8 A100 and 8 HDR NICs each.
    job = JobFootprint(gpus=992, gpus_per_node=8, nics_per_node=8, gpus_per_leaf=16)
    rates = interruption_rates(failure_rates("kokolis-rsc1"), job)
    predicted = rates.unexpected_per_s * RUN_S
    write_rows(
        "opt175b",
        [{"quantity": "restarts in two months", "published": 105, "predicted": predicted}],
    )
    assert PUBLISHED_RESTARTS / FACTOR <= predicted <= PUBLISHED_RESTARTS * FACTOR
