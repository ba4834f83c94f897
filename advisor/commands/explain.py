"""``explain MACHINE``: why a machine has its advice, from a running daemon or a state directory.

A machine the daemon (or the snapshot) never saw is an error (exit 2) that names a few it knows,
so a typo is not mistaken for a machine without advice; ``--json`` then prints them all.
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from plugins.contract.config_checks import ConfigError

ANSWER_KEYS = frozenset({"published", "job_classes", "policy_says", "power_changes"})
"""What this command reads that an older daemon's answer lacks."""


class Unknown(ConfigError):
    """The machine is not in the view read; ``known`` is the body of the endpoint's 404."""

    def __init__(self, message: str, known: dict[str, Any]) -> None:
        super().__init__(message)
        self.known = known


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("machine")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--url", type=daemon_url, default="http://127.0.0.1:9681", help="a running daemon"
    )
    where.add_argument("--state-dir", type=Path, help="read the newest snapshot instead")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def daemon_url(text: str) -> str:
    """``--url``: an http(s) address, refused at once otherwise (``cm:9681`` lacks its scheme)."""
    if urllib.parse.urlsplit(text).scheme not in ("http", "https"):
        raise argparse.ArgumentTypeError(f"expected http://HOST:PORT, got {text!r}")
    return text


def from_daemon(url: str, machine: str) -> dict[str, Any]:
    target = f"{url.rstrip('/')}/explain/{urllib.parse.quote(machine, safe='')}"
    try:
        with urllib.request.urlopen(target, timeout=10) as response:
            data: dict[str, Any] = json.load(response)
    except urllib.error.HTTPError as exc:
        raise _refused(url, exc) from None
    except (urllib.error.URLError, OSError) as exc:
        raise ConfigError(
            f"no daemon answers at {url} ({exc}); start one or use --state-dir DIR"
        ) from None
    if not data.keys() >= ANSWER_KEYS:
        raise ConfigError(f"the daemon at {url} is older than this command; upgrade it")
    return data


def _refused(url: str, exc: urllib.error.HTTPError) -> ConfigError:
    """The endpoint's refusal in one line: an unknown machine, or what it said."""
    body = exc.read().decode(errors="replace")
    if exc.code == 404 and exc.headers.get_content_type() == "application/json":
        try:
            known = json.loads(body)
            return Unknown(str(known["error"]), known)
        except (ValueError, KeyError, TypeError):
            pass  # not the daemon's answer: said as it came
    said = " ".join(body.split()) or exc.reason
    return ConfigError(f"{url} answered {exc.code}: {said}")


def from_state(directory: Path, machine: str) -> dict[str, Any]:
    from advisor.daemon.explain import UnknownMachine, explain_machine
    from advisor.daemon.state_store import StateStore

    if directory.is_file():
        raise ConfigError(
            f"{directory}: is a file, not a state directory; give the daemon's state.directory"
        )
    if not directory.is_dir():
        raise ConfigError(f"{directory}: no such state directory")
    loaded = StateStore(directory).load_newest()
    if loaded is None:
        raise ConfigError(f"{directory}: no valid snapshot (has the daemon run?)")
    state = loaded.state
    names = [m["name"] for m in state.get("machines", [])]
    if machine not in names:
        unknown = UnknownMachine(machine, names, f"the snapshot {loaded.path}")
        raise Unknown(str(unknown), unknown.as_json())
    said, why_not = policy_says(state, machine)
    advice = state.get("advice", {}).get(machine)
    data = explain_machine(machine, state, advice, loaded.saved_at, said)
    if why_not is not None:
        data["policy_says_unavailable"] = why_not
    return data


def policy_says(state: dict[str, Any], machine: str) -> tuple[dict[str, Any] | None, str | None]:
    """The policy's ``explain`` of the machine, the policy rebuilt from the snapshot as the daemon
    resumes it; or None and why it could not be."""
    from plugins.contract.policy import MachineInfo, PolicyContext
    from plugins.contract.registry import policy_class
    from plugins.contract.yaml_text import one_line

    saved = state["policy"]
    if "options" not in saved:
        return None, "this snapshot predates it; ask the running daemon (--url)"
    try:
        machines = {m["name"]: MachineInfo(**m) for m in state.get("machines", [])}
        policy = policy_class(saved["name"])(PolicyContext(machines=machines), saved["options"])
        policy.load_state(saved["state"])
        return policy.explain(machine), None
    except Exception as exc:  # a policy not installed here, or state it cannot read
        why = one_line(f"{type(exc).__name__}: {exc}")
        return None, f"policy {saved['label']} could not be rebuilt here ({why})"


def run(args: argparse.Namespace) -> int:
    from advisor.daemon.explain_text import format_explanation

    try:
        if args.state_dir is not None:
            data = from_state(args.state_dir, args.machine)
        else:
            data = from_daemon(args.url, args.machine)
    except Unknown as unknown:
        if args.json:  # the known machines, all of them, where a script reads
            print(json.dumps(unknown.known, indent=1))
            raise
        raise ConfigError(f"{unknown}; --json lists them all") from None
    print(json.dumps(data, indent=1) if args.json else format_explanation(data))
    return 0
