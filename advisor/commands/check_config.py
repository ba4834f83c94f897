"""``check-config FILE``: validate a daemon configuration without running anything."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from advisor.daemon.access import exposure_warnings, placeholder_warnings
    from advisor.daemon.config import load_config
    from advisor.lab.config_inputs import check_inputs
    from advisor.lab.model_store import WITHOUT_STORE, other_libraries, usable_meta
    from plugins.contract.registry import policy_class

    config = load_config(args.file)
    check_inputs(config)
    store = config.learning["idle_models"]
    other = None if store is None else other_libraries(store, usable_meta(store))
    host, port = config.publish["listen"]
    print(f"{args.file}: ok")
    print(f"  pool     {config.pool['kind']} ({'simulated' if config.simulated else 'live'})")
    options = " ".join(f"{key}={value}" for key, value in config.policy["options"].items())
    print(f"  policy   {config.policy['name']} {options}".rstrip())  # as --set would give them
    print(f"  listen   {host}:{port}")
    print(f"  state    {config.state['directory']}")
    for warning in [  # valid, but hooks would be refused, the pool never answer, or the
        *exposure_warnings(config.publish),  # store's models be left out
        *placeholder_warnings(config.publish),
        *example_hosts(config.pool),
        *([] if other is None else [f"learning.idle_models: {other}; {WITHOUT_STORE}"]),
    ]:
        print(f"warning: {warning}", file=sys.stderr)
    if config.policy["name"] == "random" and not config.simulated:  # valid, but does nothing
        print(
            "warning: policy.name: random (the default) gives no advice; name a policy, e.g. "
            "frugal (the README's recommendation; htcondor-advisor policies lists them)",
            file=sys.stderr,
        )
    if (
        config.pool.get("journal") is False
        and policy_class(config.policy["name"]).SNAPSHOT_LEAVES_OUT
    ):
        print(
            f"warning: pool.journal: false; {config.policy['name']} then forgets the machines' "
            "owner history at each restart (its snapshots leave it out); leave the journal on",
            file=sys.stderr,
        )
    return 0


EXAMPLE_DOMAINS = ("example.org", "example.com", "example.net")
"""Reserved for documentation (RFC 2606): an example's placeholder, never a real host."""


def example_hosts(pool: dict[str, Any]) -> list[str]:
    """The example configuration's host names left in: valid, but no pool answers there."""
    collector = pool.get("collector")  # (host, port) once checked
    named = [("pool.collector", collector[0] if isinstance(collector, tuple) else None)]
    named += [("pool.schedds", name) for name in pool.get("schedds") or []]
    return [
        f"{key}: {host} is an example's placeholder (RFC 2606); replace it with your pool's"
        for key, host in named
        if isinstance(host, str) and host.lower().endswith(EXAMPLE_DOMAINS)
    ]
