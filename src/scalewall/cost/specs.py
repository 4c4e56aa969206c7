"""Price dataclasses and the price book.

Every price is a *quote*: a value with the ``source`` it comes from and the ``date`` it was
published or observed, marked ``estimate = true`` where only a public estimate exists. The
built-in quotes live in ``scalewall/catalog/data/prices/*.toml``; a user file with the same
layout overrides them field by field (and must cite its own source and date).

File layout (every table is one quote)::

    [servers.<system id>]      usd, includes_nics
    [switches.<link id>]       usd, power_w
    [nics.<link id>]           usd, power_w
    [optics.<link id>]         transceiver_usd, transceiver_power_w, fiber_usd, dac_usd
    [rentals.<accelerator id prefix>]   usd_per_gpu_s
    [rates.<rate name>]        value          (names in ``Rates``; SI units in the name)

Units are SI like the rest of scalewall: an energy price is ``usd_per_j`` (0.08 USD/kWh =
2.22e-8 USD/J), a rental ``usd_per_gpu_s`` (2.99 USD per GPU-hour = 8.31e-4 USD per GPU-s), a
yearly share ``frac_per_s``. Data files state the human figure next to each value in a comment.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from scalewall.catalog.loader import build, load_toml
from scalewall.errors import SpecError

T = TypeVar("T")

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


@dataclass(frozen=True, kw_only=True)
class Quote:
    """Provenance shared by every price."""

    source: str
    """Where the figure comes from (publisher, document, table)."""
    date: str
    """When it was published or observed: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``."""
    estimate: bool = False
    """True where only a public estimate exists (analyst, press, reseller listing)."""
    notes: str = ""


@dataclass(frozen=True, kw_only=True)
class ServerPrice(Quote):
    """One accelerator server (node) of a catalog system, as bought."""

    usd: float
    gpus: int = 0
    """Accelerators the quote covers (0: one node of the system; 72: a whole NVL72 rack)."""
    includes_nics: bool = True
    """The price includes the scale-out NICs (DGX does); else NICs are priced per port."""


@dataclass(frozen=True, kw_only=True)
class SwitchPrice(Quote):
    """One scale-out switch of a link generation (radix from the link or fabric)."""

    usd: float
    power_w: float
    """Typical power of the switch without its pluggable optics."""


@dataclass(frozen=True, kw_only=True)
class NicPrice(Quote):
    """One scale-out NIC port of a link generation (used when servers exclude NICs)."""

    usd: float
    power_w: float


@dataclass(frozen=True, kw_only=True)
class OpticsPrice(Quote):
    """Transceivers and cables of a link generation, per port end and per link."""

    transceiver_usd: float
    """One optical transceiver per port end (half a twin-port module where ports are paired)."""
    transceiver_power_w: float
    """Power of one transceiver port end."""
    fiber_usd: float
    """One fiber cable per optical link (0 where the source folds it into the transceiver)."""
    dac_usd: float
    """One passive copper (DAC) cable per in-rack link."""


@dataclass(frozen=True, kw_only=True)
class RentalPrice(Quote):
    """Cloud rental of one accelerator; the key is a prefix of catalog accelerator ids."""

    usd_per_gpu_s: float


@dataclass(frozen=True, kw_only=True)
class Rate(Quote):
    """One scalar rate or sizing figure; its unit is in its name (see ``Rates``)."""

    value: float


@dataclass(frozen=True, kw_only=True)
class Rates:
    """Site, operations, storage and finance rates. Each is a ``Rate`` with source and date."""

    energy_usd_per_j: Rate
    """Electricity price."""
    pue: Rate
    """Power usage effectiveness: facility power / IT power (>= 1)."""
    facility_usd_per_w: Rate
    """Owned facility build cost per watt of critical IT capacity (USD/MW / 1e6)."""
    colocation_usd_per_w_s: Rate
    """Colocation rent per watt of contracted IT capacity per second (replaces the facility)."""
    maintenance_frac_per_s: Rate
    """Hardware maintenance as a share of hardware capex per second (share per year / YEAR_S)."""
    staff_usd_per_fte_s: Rate
    """Cost of one full-time engineer per second."""
    staff_fte_per_gpu: Rate
    """Cluster operations staff per installed accelerator."""
    facility_staff_fte_per_w: Rate
    """Facility operations staff per watt of IT capacity (owned facility only)."""
    storage_usd_per_byte: Rate
    """Shared training storage price per byte of usable capacity."""
    storage_usd_per_bytes_per_s: Rate
    """Shared storage price per byte/s of aggregate bandwidth (controllers, servers, links)."""
    storage_bytes_per_gpu: Rate
    """Default storage capacity sized per accelerator."""
    storage_bytes_per_s_per_gpu: Rate
    """Default storage bandwidth sized per accelerator."""
    server_lifetime_s: Rate
    network_lifetime_s: Rate
    storage_lifetime_s: Rate
    facility_lifetime_s: Rate
    cost_of_capital_per_s: Rate
    """Continuously compounded cost of capital (ln(1 + yearly rate) / YEAR_S); 0: none."""


SECTIONS: dict[str, type[Any]] = {
    "servers": ServerPrice,
    "switches": SwitchPrice,
    "nics": NicPrice,
    "optics": OpticsPrice,
    "rentals": RentalPrice,
    "rates": Rate,
}
RATE_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rates))


@dataclass(frozen=True, kw_only=True)
class PriceBook:
    """All prices, by section and key, after user overrides."""

    servers: dict[str, ServerPrice]
    switches: dict[str, SwitchPrice]
    nics: dict[str, NicPrice]
    optics: dict[str, OpticsPrice]
    rentals: dict[str, RentalPrice]
    rates: Rates
    files: tuple[str, ...] = ()
    """Price files read, built-in first, overrides last."""

    def server(self, system_id: str) -> ServerPrice:
        return _pick(self.servers, system_id, "servers", "system")

    def switch(self, link_id: str) -> SwitchPrice:
        return _pick(self.switches, link_id, "switches", "link")

    def nic(self, link_id: str) -> NicPrice:
        return _pick(self.nics, link_id, "nics", "link")

    def optic(self, link_id: str) -> OpticsPrice:
        return _pick(self.optics, link_id, "optics", "link")

    def rental(self, accelerator_id: str) -> tuple[str, RentalPrice] | None:
        """The rental whose key is the longest prefix of ``accelerator_id`` (None: no quote)."""
        keys = [k for k in self.rentals if accelerator_id.startswith(k)]
        if not keys:
            return None
        key = max(keys, key=len)
        return key, self.rentals[key]

    def table(self) -> pd.DataFrame:
        """Every quote as one row: section, key, value fields, source, date, estimate."""
        rows: list[dict[str, Any]] = []
        for section in SECTIONS:
            if section == "rates":
                items: Iterable[tuple[str, Quote]] = (
                    (name, getattr(self.rates, name)) for name in RATE_NAMES
                )
            else:
                items = getattr(self, section).items()
            for key, quote in items:
                values = {
                    k: v
                    for k, v in dataclasses.asdict(quote).items()
                    if k not in ("source", "date", "estimate", "notes")
                }
                rows.append(
                    {
                        "section": section,
                        "key": key,
                        "values": values,
                        "source": quote.source,
                        "date": quote.date,
                        "estimate": quote.estimate,
                    }
                )
        return pd.DataFrame(rows)


def _pick(table: Mapping[str, T], key: str, section: str, what: str) -> T:
    if key not in table:
        valid = ", ".join(sorted(table)) or "none"
        raise SpecError(
            what,
            key,
            f"no [{section}.{key}] price; priced: {valid} (add one in a --prices file)",
        )
    return table[key]


def builtin_price_files() -> list[Path]:
    """The built-in price files, in name order."""
    root = Path(str(resources.files("scalewall.catalog") / "data" / "prices"))
    return sorted(root.glob("*.toml"))


Raw = dict[str, dict[str, tuple[dict[str, Any], str]]]


def _read(path: Path, raw: Raw, *, override: bool) -> None:
    """Merge one price file into ``raw``; overrides merge field by field over built-ins."""
    where = str(path)
    for section, body in load_toml(path).items():
        if section not in SECTIONS:
            raise SpecError(
                section, "...", f"unknown section; valid: {', '.join(SECTIONS)}", where=where
            )
        if not isinstance(body, dict):
            raise SpecError(section, body, "expected a table of quotes", where=where)
        for key, table in body.items():
            name = f"{section}.{key}"
            if not isinstance(table, dict):
                raise SpecError(name, table, "expected a table", where=where)
            if section == "rates" and key not in RATE_NAMES:
                raise SpecError(
                    name, "...", f"unknown rate; valid: {', '.join(RATE_NAMES)}", where=where
                )
            old = raw.setdefault(section, {}).get(key)
            if override and old is not None:
                for needed in ("source", "date"):
                    if needed not in table:
                        raise SpecError(
                            f"{name}.{needed}",
                            None,
                            "an override must cite its own source and date",
                            where=where,
                        )
                table = {**old[0], **table}
            raw[section][key] = (table, where)


def _check_quote(quote: Quote, name: str, where: str) -> None:
    if not quote.source.strip():
        raise SpecError(
            f"{name}.source", quote.source, "cite where the price comes from", where=where
        )
    if not _DATE.match(quote.date):
        raise SpecError(
            f"{name}.date", quote.date, "expected YYYY, YYYY-MM or YYYY-MM-DD", where=where
        )
    for f in dataclasses.fields(quote):
        value = getattr(quote, f.name)
        if isinstance(value, float) and not value >= 0.0:
            raise SpecError(f"{name}.{f.name}", value, "must be >= 0", where=where)


def _check_rate(name: str, rate: Rate, where: str) -> None:
    """Bounds that follow from the rate's unit: fractions 0..1, PUE >= 1, lifetimes > 0."""
    value = rate.value
    if name == "pue" and not value >= 1.0:
        raise SpecError(f"rates.{name}.value", value, "a PUE is >= 1", where=where)
    if name.endswith("_frac") and not value <= 1.0:
        raise SpecError(f"rates.{name}.value", value, "a fraction is in 0..1", where=where)
    if name.endswith("_lifetime_s") and not value > 0.0:
        raise SpecError(f"rates.{name}.value", value, "a lifetime is > 0 s", where=where)


def _build(section: str, key: str, table: dict[str, Any], where: str) -> Any:
    name = f"{section}.{key}"
    quote = build(SECTIONS[section], table, where=f"{where} [{name}]")
    _check_quote(quote, name, where)
    if section == "rates":
        _check_rate(key, quote, where)
    return quote


def load_prices(overrides: Iterable[Path] = ()) -> PriceBook:
    """The built-in price book with ``overrides`` (user TOML files) merged over it, in order.

    A bad file raises ``SpecError`` naming the file, the ``section.key`` and the field.
    """
    raw: Raw = {}
    files = builtin_price_files()
    for path in files:
        _read(path, raw, override=False)
    extra = [Path(p) for p in overrides]
    for path in extra:
        _read(path, raw, override=True)
    built: dict[str, dict[str, Any]] = {
        section: {key: _build(section, key, t, w) for key, (t, w) in raw.get(section, {}).items()}
        for section in SECTIONS
    }
    missing = [n for n in RATE_NAMES if n not in built["rates"]]
    if missing:
        raise SpecError(
            "rates",
            ", ".join(missing),
            "required rates are missing",
            where=str(files[0].parent) if files else "prices",
        )
    return PriceBook(
        servers=built["servers"],
        switches=built["switches"],
        nics=built["nics"],
        optics=built["optics"],
        rentals=built["rentals"],
        rates=Rates(**{n: built["rates"][n] for n in RATE_NAMES}),
        files=tuple(str(p) for p in [*files, *extra]),
    )
