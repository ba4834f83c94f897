"""Several hosts on one machine: a network namespace per host, each with its own address on a
bridge the test creates (needs root). The test process stays in the root namespace, on the
bridge's own address, so it talks to the hosts as another machine of the network would; no
traffic leaves the bridge (no route, no NAT).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

BRIDGE = "advbr0"
SUBNET = "10.231.7"
"""A private /24 of nothing else on the machine."""
OUTSIDE = f"{SUBNET}.1"
"""The bridge's (the test process's) address: a host of the network that is none of the pool's."""


def namespace(host: str) -> str:
    return f"adv-{host}"


def _ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True)


def create(addresses: Mapping[str, str]) -> None:
    """The bridge, and per host a namespace whose ``eth0`` (a veth pair's end) has its address."""
    destroy(addresses)  # leftovers of an interrupted run
    _ip("link", "add", BRIDGE, "type", "bridge")
    _ip("addr", "add", f"{OUTSIDE}/24", "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")
    for host, address in addresses.items():
        ns, outer = namespace(host), f"adv-{host}-br"[:15]
        _ip("netns", "add", ns)
        _ip("link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _ip("link", "set", outer, "master", BRIDGE, "up")
        _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "link", "set", "lo", "up")


def destroy(addresses: Mapping[str, str]) -> None:
    """Remove the namespaces (their veth pairs go with them) and the bridge."""
    for host in addresses:
        _ip("netns", "del", namespace(host), check=False)
    _ip("link", "del", BRIDGE, check=False)


def inside(host: str) -> list[str]:
    """The command prefix that runs a program in ``host``'s namespace."""
    return ["ip", "netns", "exec", namespace(host)]
