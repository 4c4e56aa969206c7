from __future__ import annotations

import pytest

from scalewall import catalog
from scalewall.catalog.schema import ModelSpec
from scalewall.plan.topology import Cluster, make_cluster


@pytest.fixture
def llama70b() -> ModelSpec:
    return catalog.model("llama3-70b")


@pytest.fixture
def h100_1024() -> Cluster:
    return make_cluster(
        system=catalog.system("dgx-h100"), fabric=catalog.fabric("ndr-rail-3tier"), num_gpus=1024
    )
