"""The public surface of ``scalewall.probe``: what ``__all__`` promises exists."""

from __future__ import annotations

import scalewall.probe as probe


def test_all_names_exist() -> None:
    assert sorted(probe.__all__) == sorted(set(probe.__all__))
    for name in probe.__all__:
        assert hasattr(probe, name), name
    assert {"run_probe", "read_measurements", "write_measurements", "load_measurements"} <= set(
        probe.__all__
    )
