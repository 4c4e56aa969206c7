"""Network bill of materials of a fat-tree (folded Clos) scale-out fabric.

Notation: k switch radix (ports), o oversubscription (down:up) at a switch, d and u its down and
up ports, E the NIC ports to connect (nodes x NICs per node).

* A leaf splits its k ports into d = floor(k o / (1 + o)) down and u = ceil(d / o) up
  (k = 64, o = 1: 32 down, 32 up; o = 7: 56 down, 8 up).
* Rail-optimized wiring: a *rail group* of d nodes has one leaf per rail (NIC index), leaf r
  takes NIC r of every node in the group; top-of-rack: a leaf takes whole nodes, d / NICs each.
* Two tiers: spines = ceil(L u / k); every spine reaches every leaf, so L <= k and the fabric
  serves at most k d endpoints (k^2 / 2 at full bisection).
* Three tiers: a pod is the leaves one set of spines reaches (d2 leaves, d2 = the spine's down
  ports); pods <= k because a core switch has one port per pod; at most k d2 d endpoints
  (k^3 / 4 at full bisection) with k^2 / 4 core switches (5 k^2 / 4 switches in all).
* Fewer switch tiers are built when they suffice: a single leaf needs no spine, a single pod no
  core (the spines then use all their ports downward).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from scalewall.cost.hardware import ClusterHardware
from scalewall.errors import SpecError

_EPS = 1e-9
"""Guards floor() against binary rounding of k o / (1 + o) for exact ratios."""

MEDIA = ("dac", "optical")


@dataclass(frozen=True, kw_only=True)
class CablingRules:
    """Which medium each tier's links use."""

    top_of_rack_leaf_medium: str = "dac"
    """Node-to-leaf inside one rack: passive copper reaches the few metres of a rack
    (400G DACs are offered up to about 3 m; fibrecross.com, '400G Direct Attach Cables')."""
    rail_leaf_medium: str = "optical"
    """Rail-optimized leaves sit in their own racks, beyond copper reach; the DGX SuperPOD
    reference architecture cables its compute fabric with optical transceivers."""
    switch_medium: str = "optical"
    """Switch-to-switch links run between racks and rows."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value not in MEDIA:
                raise SpecError(f.name, value, f"valid: {', '.join(MEDIA)}")


@dataclass(frozen=True, kw_only=True)
class BomTier:
    """One layer of links: from the layer below up to ``switches`` switches."""

    name: str
    """``node-leaf``, ``leaf-spine`` or ``spine-core``."""
    switches: int
    """Switches at the upper end of these links."""
    links: int
    medium: str
    transceivers: int
    fiber_cables: int
    dac_cables: int


@dataclass(frozen=True, kw_only=True)
class NetworkBom:
    """Switches, NICs, transceivers and cables of one cluster's scale-out fabric."""

    cluster: str
    fabric: str
    link: str
    wiring: str
    radix: int
    nodes: int
    endpoints: int
    """NIC ports connected (nodes x NICs per node)."""
    switch_tiers: int
    """Switch tiers actually built (1 to the fabric's tiers)."""
    pods: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    tiers: tuple[BomTier, ...]
    nics: int
    max_endpoints: int
    """NIC ports the fabric design can serve with its tiers and radix."""

    @property
    def switches(self) -> int:
        return self.leaf_switches + self.spine_switches + self.core_switches

    @property
    def transceivers(self) -> int:
        return sum(t.transceivers for t in self.tiers)

    @property
    def fiber_cables(self) -> int:
        return sum(t.fiber_cables for t in self.tiers)

    @property
    def dac_cables(self) -> int:
        return sum(t.dac_cables for t in self.tiers)

    @property
    def links(self) -> int:
        return sum(t.links for t in self.tiers)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["tiers"] = [dataclasses.asdict(t) for t in self.tiers]
        out.update(
            switches=self.switches,
            links=self.links,
            transceivers=self.transceivers,
            fiber_cables=self.fiber_cables,
            dac_cables=self.dac_cables,
        )
        return out

    def table(self) -> pd.DataFrame:
        """One row per link layer."""
        return pd.DataFrame([dataclasses.asdict(t) for t in self.tiers])


def port_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """(down, up) ports of a switch: down:up = ``oversubscription``, down + up <= radix."""
    if not oversubscription >= 1.0:
        raise SpecError("oversubscription", oversubscription, "a down:up ratio >= 1.0")
    down = math.floor(radix * oversubscription / (1.0 + oversubscription) + _EPS)
    up = math.ceil(down / oversubscription - _EPS)
    if down < 1 or down + up > radix:
        raise SpecError("oversubscription", oversubscription, f"does not fit radix {radix}")
    return down, up


def _tier(name: str, switches: int, links: int, medium: str) -> BomTier:
    optical = medium == "optical"
    return BomTier(
        name=name,
        switches=switches,
        links=links,
        medium=medium,
        transceivers=2 * links if optical else 0,
        fiber_cables=links if optical else 0,
        dac_cables=0 if optical else links,
    )


@dataclass(frozen=True, kw_only=True)
class _Leaves:
    """Leaf layout: ``groups`` groups of ``leaves_per_group`` leaves, each group serving
    ``nodes_per_group`` nodes (the last group may be partly filled)."""

    down: int
    """Down ports of a leaf in a full group."""
    oversubscription: float
    nodes_per_group: int
    leaves_per_group: int
    nodes: int
    rail: bool
    nics: int

    @property
    def groups(self) -> int:
        return math.ceil(self.nodes / self.nodes_per_group)

    @property
    def count(self) -> int:
        return self.groups * self.leaves_per_group

    def uplinks(self, groups: int, nodes: int) -> int:
        """Leaf-to-spine links of ``groups`` groups holding ``nodes`` nodes: each leaf gets
        ceil(used down ports / o) uplinks, so a partly filled group is not over-built."""
        full, rest = divmod(nodes, self.nodes_per_group)
        out = full * self._group_uplinks(self.nodes_per_group)
        if rest:
            out += self._group_uplinks(rest)
        return out if groups else 0

    def _group_uplinks(self, nodes: int) -> int:
        used = nodes if self.rail else nodes * self.nics
        return self.leaves_per_group * math.ceil(used / self.oversubscription - _EPS)


def _leaves(hw: ClusterHardware, radix: int) -> _Leaves:
    """Leaf layout from the wiring, the leaf's oversubscription and the fabric's leaf_gpus."""
    fab, sysm = hw.fabric, hw.system
    rail = fab.wiring == "rail-optimized"
    if fab.wiring not in ("rail-optimized", "top-of-rack"):
        raise SpecError("wiring", fab.wiring, "valid: rail-optimized, top-of-rack")
    down_max, _ = port_split(radix, fab.oversubscription[0])
    nics = sysm.nics_per_node
    if fab.leaf_gpus:
        if fab.leaf_gpus % sysm.gpus_per_node:
            raise SpecError("leaf_gpus", fab.leaf_gpus, f"a multiple of {sysm.gpus_per_node}")
        nodes_per_group = fab.leaf_gpus // sysm.gpus_per_node
    else:
        nodes_per_group = down_max if rail else down_max // nics
    down = nodes_per_group if rail else nodes_per_group * nics
    if nodes_per_group < 1 or down > down_max:
        raise SpecError("leaf_gpus", fab.leaf_gpus, f"a leaf has {down_max} down ports")
    return _Leaves(
        down=down,
        oversubscription=fab.oversubscription[0],
        nodes_per_group=nodes_per_group,
        leaves_per_group=nics if rail else 1,
        nodes=hw.nodes,
        rail=rail,
        nics=nics,
    )


def _check_fabric(hw: ClusterHardware) -> None:
    fab = hw.fabric
    if fab.tiers not in (2, 3):
        raise SpecError("tiers", fab.tiers, "valid: 2 or 3", where=fab.id)
    if len(fab.oversubscription) != fab.tiers - 1:
        raise SpecError(
            "oversubscription", fab.oversubscription, f"{fab.tiers - 1} ratio(s)", where=fab.id
        )


@dataclass(frozen=True, kw_only=True)
class _Upper:
    pods: int
    spines: int
    core: int
    leaf_spine_links: int
    spine_core_links: int
    max_endpoints: int


def network_bom(hw: ClusterHardware, rules: CablingRules | None = None) -> NetworkBom:
    """Switches per tier, NICs, transceivers and cables for ``hw``.

    Raises ``SpecError`` when the cluster exceeds what the fabric's tiers and radix can serve.
    """
    rules = rules or CablingRules()
    _check_fabric(hw)
    fab, k = hw.fabric, hw.switch_radix
    lv = _leaves(hw, k)
    endpoints = hw.nodes * hw.system.nics_per_node
    up = _two_tier(lv, k) if fab.tiers == 2 else _three_tier(hw, lv, k)
    if endpoints > up.max_endpoints:
        raise SpecError(
            "nodes",
            hw.nodes,
            f"a {fab.tiers}-tier {fab.id} of radix {k} serves at most {up.max_endpoints} NIC "
            f"ports ({up.max_endpoints // hw.system.nics_per_node} nodes); use more tiers",
        )
    leaf_medium = rules.rail_leaf_medium if lv.rail else rules.top_of_rack_leaf_medium
    tiers = [_tier("node-leaf", lv.count, endpoints, leaf_medium)]
    if up.spines:
        tiers.append(_tier("leaf-spine", up.spines, up.leaf_spine_links, rules.switch_medium))
    if up.core:
        tiers.append(_tier("spine-core", up.core, up.spine_core_links, rules.switch_medium))
    return NetworkBom(
        cluster=hw.name,
        fabric=fab.id,
        link=hw.link.id,
        wiring=fab.wiring,
        radix=k,
        nodes=hw.nodes,
        endpoints=endpoints,
        switch_tiers=len(tiers),
        pods=up.pods,
        leaf_switches=lv.count,
        spine_switches=up.spines,
        core_switches=up.core,
        tiers=tuple(tiers),
        nics=endpoints,
        max_endpoints=up.max_endpoints,
    )


def _two_tier(lv: _Leaves, k: int) -> _Upper:
    """Leaf-spine: spines = ceil(uplinks / k); no spine when a single leaf suffices."""
    links = lv.uplinks(lv.groups, lv.nodes) if lv.count > 1 else 0
    return _Upper(
        pods=1,
        spines=math.ceil(links / k),
        core=0,
        leaf_spine_links=links,
        spine_core_links=0,
        max_endpoints=k * lv.down,
    )


def _three_tier(hw: ClusterHardware, lv: _Leaves, k: int) -> _Upper:
    """Leaf-spine-core with pods of whole leaf groups; no core when one pod suffices."""
    fab = hw.fabric
    o2 = fab.oversubscription[1]
    down2, _ = port_split(k, o2)
    groups_per_pod = down2 // lv.leaves_per_group
    if fab.pod_gpus:
        # A pod wider than one spine's down ports (Meta's 3,072-GPU pods) is counted by ports:
        # spines = ceil(pod uplinks / spine down ports); such builds use higher-radix or
        # multi-plane aggregation switches, which this port count approximates.
        group_gpus = lv.nodes_per_group * hw.system.gpus_per_node
        if fab.pod_gpus % group_gpus:
            raise SpecError(
                "pod_gpus", fab.pod_gpus, f"whole leaf groups of {group_gpus} GPUs", where=fab.id
            )
        groups_per_pod = fab.pod_gpus // group_gpus
    if groups_per_pod < 1:
        raise SpecError("radix", k, "a spine cannot reach one whole leaf group", where=fab.id)
    max_endpoints = k * groups_per_pod * lv.leaves_per_group * lv.down
    pods = math.ceil(lv.groups / groups_per_pod)
    if pods <= 1:
        return dataclasses.replace(_two_tier(lv, k), max_endpoints=max_endpoints)
    pod_nodes = groups_per_pod * lv.nodes_per_group
    full, rest = divmod(lv.nodes, pod_nodes)
    pod_links = [lv.uplinks(groups_per_pod, pod_nodes)] * full
    if rest:
        pod_links.append(lv.uplinks(math.ceil(rest / lv.nodes_per_group), rest))
    spines = sum(math.ceil(n / down2) for n in pod_links)
    core_links = sum(math.ceil(n / o2 - _EPS) for n in pod_links)
    return _Upper(
        pods=pods,
        spines=spines,
        core=math.ceil(core_links / k),
        leaf_spine_links=sum(pod_links),
        spine_core_links=core_links,
        max_endpoints=max_endpoints,
    )
