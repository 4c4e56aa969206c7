"""Unit constants and conversions. Everything inside scalewall is SI base units in plain floats."""

from __future__ import annotations

KIB = 2.0**10
MIB = 2.0**20
GIB = 2.0**30
TIB = 2.0**40
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12

TERA = 1e12
PETA = 1e15

MINUTE_S = 60.0
HOUR_S = 3600.0
DAY_S = 86400.0

BITS_PER_BYTE = 8.0


def gbps_to_bytes_per_s(gbit_per_s: float) -> float:
    """A link rate in Gb/s (decimal) as bytes per second."""
    return gbit_per_s * 1e9 / BITS_PER_BYTE
