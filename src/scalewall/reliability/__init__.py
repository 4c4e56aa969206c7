"""Reliability and goodput: failure rates by component, checkpoint cost by storage tier,
checkpoint intervals, and goodput analytically and by Monte Carlo."""

from __future__ import annotations
