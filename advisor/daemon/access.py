"""Who may read what from the advice endpoint: ``publish.allow`` and ``publish.admin``.

Like HTCondor's ALLOW_READ. A hook needs its own machine's advice and monitoring needs
``/healthz``; the other paths show who uses which desktop when (``/explain``), every machine at
once (``/advice``) or the daemon's internals (``/metrics``), so only administrators read them.
Both lists default to loopback: opening ``publish.listen`` to the network exposes nothing until
the networks that may read are named. Networks only: host names were resolved when the
configuration was checked, never per request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Any

Network = IPv4Network | IPv6Network
LOOPBACK: tuple[Network, ...] = (ip_network("127.0.0.0/8"), ip_network("::1/128"))
HOOKS, ADMINS = "publish.allow", "publish.admin"
DOCUMENTATION: tuple[Network, ...] = tuple(
    ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)
"""Networks reserved for examples (RFC 5737's TEST-NETs, RFC 3849): no host is given such an
address, so in a list they are a placeholder left in (``examples/advisor.yaml`` has one)."""


def admin_path(path: str) -> bool:
    """Paths only ``publish.admin`` may read (see ``advisor.daemon.http_endpoint``)."""
    return path in ("/advice", "/metrics") or path.startswith("/explain/")


def hook_path(path: str) -> bool:
    """Paths a hook or a monitor reads: one machine's advice and liveness."""
    return path.startswith("/advice/") or path == "/healthz"


def peer_address(peer: str) -> IPv4Address | IPv6Address | None:
    """The peer as an address; an IPv4-mapped IPv6 peer (``::ffff:10.1.2.3``, what a socket
    bound to ``::`` reports for IPv4 clients) as its IPv4 address, so IPv4 networks match it.
    None when ``peer`` is no address (it then matches no list)."""
    try:
        address = ip_address(peer)
    except ValueError:
        return None
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass(frozen=True)
class Access:
    """The checked ``publish.allow`` (``hooks``) and ``publish.admin`` (``admins``) networks."""

    hooks: tuple[Network, ...] = LOOPBACK
    admins: tuple[Network, ...] = LOOPBACK

    @classmethod
    def from_publish(cls, publish: Mapping[str, Any]) -> Access:
        return cls(tuple(publish["allow"]), tuple(publish["admin"]))

    def refusal(self, peer: str, path: str) -> str | None:
        """None when ``peer`` may GET ``path``, else the key of the list that would admit it.

        Administrators read everything. A peer on either list gets the endpoint's own answer
        on an unknown path (404); a peer on neither gets 403 whatever the path, so it learns
        nothing about which paths exist."""
        address = peer_address(peer)
        if address is not None and _within(address, self.admins):
            return None
        if admin_path(path):
            return ADMINS
        if address is not None and _within(address, self.hooks):
            return None
        return HOOKS


def _within(address: IPv4Address | IPv6Address, networks: tuple[Network, ...]) -> bool:
    return any(address in network for network in networks)  # another family is never in


def exposure_warnings(publish: Mapping[str, Any]) -> list[str]:
    """Why hooks on other hosts would be refused: ``publish.listen`` reachable from the network
    while ``publish.allow`` admits only loopback. ``check-config`` prints these lines and the
    daemon logs them at start: a 403 seen only on the execute points is hard to trace back."""
    host, port = publish["listen"]
    if _loopback(host) or not all(network.is_loopback for network in publish["allow"]):
        return []
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return [
        f"publish.listen {shown} is reachable from other hosts but {HOOKS} admits only "
        f"loopback: execute points' hooks will get 403; list their networks in {HOOKS}"
    ]


def placeholder_warnings(publish: Mapping[str, Any]) -> list[str]:
    """Entries within a documentation network: valid, so the file loads, but they admit nobody,
    and the hosts meant to read still get 403. ``check-config`` says which to replace."""
    meant = {HOOKS: "your execute points' networks", ADMINS: "your administrators' hosts"}
    return [
        f"{key}: {network} is a documentation network (an example's placeholder that no host "
        f"has); replace it with {meant[key]}"
        for key, networks in ((HOOKS, publish["allow"]), (ADMINS, publish["admin"]))
        for network in networks
        if _documentation(network)
    ]


def _documentation(network: Network) -> bool:
    """Whether ``network`` lies within one (both its ends; another family is never in)."""
    return any(network[0] in doc and network[-1] in doc for doc in DOCUMENTATION)


def _loopback(host: str) -> bool:
    """Whether a listen host is loopback only (a name other than localhost is taken as not)."""
    address = peer_address(host)
    return host == "localhost" if address is None else address.is_loopback
