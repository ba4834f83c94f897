"""``explain MACHINE``: why a machine has its advice, from a running daemon or a state directory."""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from plugins.contract.config_checks import ConfigError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("machine")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", default="http://127.0.0.1:9681", help="a running daemon")
    where.add_argument("--state-dir", type=Path, help="read the newest snapshot instead")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def from_daemon(url: str, machine: str) -> dict[str, Any]:
    target = f"{url.rstrip('/')}/explain/{urllib.parse.quote(machine, safe='')}"
    try:
        with urllib.request.urlopen(target, timeout=10) as response:
            data: dict[str, Any] = json.load(response)
            return data
    except (urllib.error.URLError, OSError) as exc:
        raise ConfigError(
            f"explain: no daemon answers at {url} ({exc}); start one or use --state-dir DIR"
        ) from None


def from_state(directory: Path, machine: str) -> dict[str, Any]:
    from advisor.daemon.explain import explain_machine
    from advisor.daemon.state_store import StateStore

    if not directory.is_dir():
        raise ConfigError(f"explain: {directory}: no such state directory")
    loaded = StateStore(directory).load_newest()
    if loaded is None:
        raise ConfigError(f"explain: {directory}: no valid snapshot (has the daemon run?)")
    advice = loaded.state.get("advice", {}).get(machine)
    return explain_machine(machine, loaded.state, advice, loaded.saved_at)


def run(args: argparse.Namespace) -> int:
    from advisor.daemon.explain import format_explanation

    if args.state_dir is not None:
        data = from_state(args.state_dir, args.machine)
    else:
        data = from_daemon(args.url, args.machine)
    print(json.dumps(data, indent=1) if args.json else format_explanation(data))
    return 0
