"""A runs file with a wrong value anywhere: that case is one error line naming the field, the
others are predicted, and nothing hangs or raises past the reader and the harness."""

from __future__ import annotations

import copy
import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scalewall.errors import ScalewallError
from scalewall.validation import harness
from scalewall.validation.runs import read_runs_file

TIMEOUT_S = 20
JUNK: list[Any] = [None, 0, -1, 1.5, "x", "", [], {}, [1, 2], True, 10**12, 1e300, -0.0]
BASE: dict[str, Any] = {
    "id": "base",
    "source": "test",
    "model": {
        "layers": 32,
        "hidden": 4096,
        "heads": 32,
        "kv_heads": 8,
        "ffn_hidden": 14336,
        "vocab": 128256,
        "activation": "swiglu",
        "params": 8.0e9,
    },
    "training": {"seq_len": 8192, "global_batch": 512, "micro_batch": 1, "precision": "bf16"},
    "plan": {"tp": 2, "pp": 2, "cp": 1, "recompute": "selective", "stack": "megatron-core"},
    "hardware": {"gpu": "h100-sxm-80gb", "gpus": 64, "nics_per_node": 8, "nic_gbps": 400},
    "published": {"step_time_s": 10.0},
}
FIELDS = [
    (section, key)
    for section in ("model", "training", "plan", "hardware", "published")
    for key in BASE[section]
] + [
    ("training", "fp8_recipe"),
    ("plan", "vpp"),
    ("plan", "sequence_parallel"),
    ("plan", "zero"),
    ("model", "catalog"),
]


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def _raise(*_: object) -> None:
        raise TimeoutError(f"past {seconds} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


MOE_BASE: dict[str, Any] = copy.deepcopy(BASE) | {"id": "moe-base"}
MOE_BASE["model"] |= {
    "moe": {
        "routed_experts": 8,
        "shared_experts": 0,
        "top_k": 2,
        "expert_ffn_hidden": 14336,
        "first_dense_layers": 0,
    }
}
MOE_BASE["plan"] |= {"ep": 8}
MOE_BASE["published"] |= {"memory_gib": {"weights_grads_optimizer": 40.0, "activations": 20.0}}
NESTED = [("model", "moe", key) for key in MOE_BASE["model"]["moe"]] + [
    ("model", "moe", "moe_layer_freq"),
    ("published", "memory_gib", "activations"),
]
"""Fields inside a section's table, changed in ``MOE_BASE`` (the error names the table's
field or the table)."""


def test_a_wrong_value_is_its_cases_error_naming_the_field(tmp_path: Path) -> None:
    cases, named = [BASE, MOE_BASE], {}
    for number, ((section, key), value) in enumerate(
        (field, value) for field in [*FIELDS, ("model", "moe")] for value in JUNK
    ):
        bad = copy.deepcopy(BASE) | {"id": f"bad{number}"}
        bad[section][key] = value
        cases.append(bad)
        named[bad["id"]] = key
    for number, ((section, table, key), value) in enumerate(
        (field, value) for field in NESTED for value in JUNK
    ):
        bad = copy.deepcopy(MOE_BASE) | {"id": f"nested{number}"}
        bad[section][table][key] = value
        cases.append(bad)
        named[bad["id"]] = key if table == "moe" else table
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"format": "scalewall-runs/1", "cases": cases}))
    runs = read_runs_file(path)
    messages = {e.id: e.text for e in runs.errors}
    predicted = set()
    for case in runs.cases:
        with _deadline(TIMEOUT_S):
            try:
                harness.compare(harness.predict_case(case))
                predicted.add(case.id)
            except ScalewallError as exc:
                messages[case.id] = str(exc)
    assert {"base", "moe-base"} <= predicted
    assert len(predicted) + len(messages) == len(cases)
    # No routed experts (0 or null) makes the model dense: the stated ep is then the error.
    unnamed = {
        k: t
        for k, t in messages.items()
        if named[k] not in t and not (named[k] == "routed_experts" and "dense model" in t)
    }
    assert not unnamed
