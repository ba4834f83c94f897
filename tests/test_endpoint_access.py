"""Who may read the advice endpoint (publish.allow, publish.admin), against the real server.

Other hosts are not at hand, so refusals are provoked by lists that leave loopback out.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import logging
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from configkit import example_with_token

from advisor.cli import main
from advisor.daemon.access import Access, exposure_warnings
from advisor.daemon.board import AdviceBoard
from advisor.daemon.config import check_config, load_config
from advisor.daemon.fields import ConfigError
from advisor.daemon.http_endpoint import Endpoint
from advisor.daemon.http_server import AdviceServer
from advisor.daemon.metrics import DaemonMetrics
from advisor.daemon.runtime import Daemon, make_policy
from plugins.contract.advice import Advice, MachineAdvice

NOW = 1000.0
SIM = {"kind": "sim", "days": 2, "scale": 0.05}
HOOK_PATHS = ("/advice/pc1", "/healthz")
ADMIN_PATHS = ("/advice", "/explain/pc1", "/metrics")
WARNING = (
    "warning: publish.listen 0.0.0.0:9681 is reachable from other hosts but publish.allow "
    "admits only loopback: execute points' hooks will get 403; list their networks in "
    "publish.allow"
)


def access(**publish: Any) -> Access:
    """The Access the daemon builds from a ``publish`` section (checked as in the YAML)."""
    return Access.from_publish(check_config({"pool": SIM, "publish": publish}).publish)


def make_endpoint(rules: Access | None = None) -> Endpoint:
    board = AdviceBoard("ranker/1")
    board.publish(Advice({"pc1": MachineAdvice(rank=2.5, expires=NOW + 600)}), NOW)
    return Endpoint(
        board,
        DaemonMetrics(lambda: NOW),
        lambda: NOW,
        lambda: {"status": "ok"},
        lambda machine: {"machine": machine},
        access=rules,
    )


@contextlib.contextmanager
def serving(endpoint: Endpoint, host: str = "127.0.0.1") -> Iterator[int]:
    server = AdviceServer(endpoint, host, 0)
    server.start()
    try:
        yield int(server.address.rsplit(":", 1)[1])
    finally:
        server.stop()


def fetch(port: int, path: str, method: str = "GET") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path)
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def forbidden(endpoint: Endpoint, key: str) -> float:
    value = endpoint.metrics.registry.get_sample_value(
        "advisor_requests_forbidden_total", {"list": key}
    )
    return value or 0.0


def test_loopback_reads_every_path_by_default() -> None:
    with serving(make_endpoint()) as port:
        for path in (*HOOK_PATHS, *ADMIN_PATHS):
            assert fetch(port, path)[0] == 200, path
        assert fetch(port, "/nowhere")[0] == 404


def test_a_peer_outside_publish_admin_reads_only_the_hook_paths() -> None:
    endpoint = make_endpoint(access(allow=["127.0.0.1/32"], admin=["10.9.9.0/24"]))
    with serving(endpoint) as port:
        for path in ADMIN_PATHS:
            assert fetch(port, path) == (403, b"forbidden: 127.0.0.1 is not in publish.admin\n")
        assert fetch(port, "/explain/pc1", "HEAD") == (403, b"")
        status, body = fetch(port, "/advice/pc1")
        assert status == 200 and b"AdvisorRank = 2.5\n" in body
        assert fetch(port, "/healthz")[0] == 200
        assert fetch(port, "/nowhere")[0] == 404  # allowed peers still learn a path is unknown
    assert forbidden(endpoint, "publish.admin") == 4
    assert forbidden(endpoint, "publish.allow") == 0


def test_a_peer_on_neither_list_reads_nothing() -> None:
    endpoint = make_endpoint(access(allow="10.9.9.0/24", admin=[]))
    with serving(endpoint) as port:
        for path in (*HOOK_PATHS, "/nowhere"):
            assert fetch(port, path) == (403, b"forbidden: 127.0.0.1 is not in publish.allow\n")
        assert fetch(port, "/advice")[1] == b"forbidden: 127.0.0.1 is not in publish.admin\n"
    assert forbidden(endpoint, "publish.allow") == 3


def test_an_ipv4_mapped_peer_matches_ipv4_networks() -> None:
    rules = access(allow=["10.0.0.0/8"], admin=["192.0.2.7"])
    assert rules.refusal("::ffff:10.1.2.3", "/advice/pc1") is None
    assert rules.refusal("::ffff:10.1.2.3", "/advice") == "publish.admin"
    assert rules.refusal("::ffff:192.0.2.7", "/metrics") is None
    assert rules.refusal("::ffff:11.1.2.3", "/advice/pc1") == "publish.allow"
    assert rules.refusal("not an address", "/advice/pc1") == "publish.allow"


def test_a_server_on_an_ipv6_socket_admits_ipv4_loopback_clients() -> None:
    """Such a socket reports an IPv4 client as ::ffff:127.0.0.1, which the defaults admit."""
    try:
        server = AdviceServer(make_endpoint(), "::ffff:127.0.0.1", 0)
    except OSError as exc:
        pytest.skip(f"no IPv4-mapped IPv6 sockets here: {exc}")
    server.start()
    try:
        assert fetch(int(server.address.rsplit(":", 1)[1]), "/explain/pc1")[0] == 200
    finally:
        server.stop()


def test_host_names_resolve_once_to_all_their_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"hooks.example.org": ["10.1.2.3", "2001:db8::7", "10.1.2.3"]}

    def resolve(host: str, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(0, 0, 0, "", (a, 0)) for a in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    rules = access(allow=["hooks.example.org", "192.0.2.0/24"])
    assert rules.hooks == tuple(
        ipaddress.ip_network(n) for n in ("10.1.2.3/32", "2001:db8::7/128", "192.0.2.0/24")
    )
    answers.clear()  # the host moved: what was resolved at load still decides
    assert rules.refusal("2001:db8::7", "/healthz") is None
    with pytest.raises(ConfigError) as caught:
        access(admin=["127.0.0.1", "hooks.example.org"])
    assert str(caught.value) == (
        "publish.admin[1]: 'hooks.example.org' is not a network (10.0.0.0/8), address or "
        "resolvable host name (Name or service not known)"
    )


@pytest.mark.parametrize(
    ("publish", "message"),
    [
        (
            {"allow": ["10.0.0.0/8", "::1", "foo..bar"]},
            "publish.allow[2]: 'foo..bar' is not a network (10.0.0.0/8), address or resolvable "
            "host name (",
        ),
        (
            {"admin": ["10.0.0.1/8"]},
            "publish.admin[0]: '10.0.0.1/8' has host bits set; write the network 10.0.0.0/8 or "
            "the address 10.0.0.1",
        ),
        ({"allow": {"a": 1}}, "publish.allow: must be a list, each a network (10.0.0.0/8)"),
        ({"allow": [None]}, "publish.allow[0]: must be a non-empty string, got None"),
    ],
)
def test_a_bad_entry_is_one_line_naming_key_and_entry(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    publish: Mapping[str, Any],
    message: str,
) -> None:
    path = tmp_path / "advisor.yaml"
    raw = {"pool": SIM, "publish": publish, "state": {"directory": str(tmp_path / "s")}}
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(message)
    assert main(["check-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_bad_entry_of_a_list_is_named_in_its_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "advisor.yaml"
    publish = {"allow": ["10.0.0.0/8", "10.0.0.1/8", None, "foo..bar"], "admin": [None, "::1", 7]}
    raw = {"pool": SIM, "publish": publish, "state": {"directory": str(tmp_path / "s")}}
    path.write_text(yaml.safe_dump(raw))
    assert main(["check-config", str(path)]) == 2
    admin, allow = capsys.readouterr().err.splitlines()  # in the file's order (sorted keys)
    assert (
        "error: publish.allow: 3 bad entries: [1] '10.0.0.1/8' has host bits set; write the "
        "network 10.0.0.0/8 or the address 10.0.0.1; [2] must be a non-empty string, got None; "
        "[3] 'foo..bar' is not a network (10.0.0.0/8), address or resolvable host name ("
    ) in allow
    assert admin.endswith(
        "error: publish.admin: 2 bad entries: [0] must be a non-empty string, got None; "
        "[2] must be a non-empty string, got 7"
    )


def test_check_config_warns_of_a_documentation_network_left_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example's ``publish.allow`` holds 192.0.2.0/24 for the execute points: valid, but
    no host has such an address, so the hooks would get 403 until it is replaced; its
    collector and schedd are example.org names, where no pool answers."""
    assert main(["check-config", str(example_with_token(tmp_path))]) == 0
    assert capsys.readouterr().err == (
        "warning: publish.allow: 192.0.2.0/24 is a documentation network (an example's "
        "placeholder that no host has); replace it with your execute points' networks\n"
        "warning: pool.collector: cm.example.org is an example's placeholder (RFC 2606); "
        "replace it with your pool's\n"
        "warning: pool.schedds: submit1.example.org is an example's placeholder (RFC 2606); "
        "replace it with your pool's\n"
    )
    path = tmp_path / "own.yaml"
    publish = {
        "listen": "0.0.0.0:9681",
        "allow": ["10.0.0.0/8", "198.51.100.7", "203.0.113.0/25", "192.0.0.0/16"],
        "admin": ["2001:db8::/48", "2001:db9::/32"],
    }
    raw = {"pool": SIM, "publish": publish, "state": {"directory": str(tmp_path / "s")}}
    path.write_text(yaml.safe_dump(raw))
    assert main(["check-config", str(path)]) == 0
    warned = [line.split(" is ")[0] for line in capsys.readouterr().err.splitlines()]
    assert warned == [
        "warning: publish.allow: 198.51.100.7/32",
        "warning: publish.allow: 203.0.113.0/25",
        "warning: publish.admin: 2001:db8::/48",
    ]


@pytest.mark.parametrize(
    ("publish", "warned"),
    [
        ({"listen": "0.0.0.0:9681"}, True),
        ({"listen": "0.0.0.0:9681", "allow": ["127.0.0.1"]}, True),
        ({"listen": "0.0.0.0:9681", "allow": ["10.0.0.0/8"]}, False),
        ({"listen": "127.0.0.1:9681"}, False),
        ({"listen": "localhost:9681"}, False),
    ],
)
def test_check_config_warns_when_listen_is_open_but_allow_is_loopback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], publish: dict[str, Any], warned: bool
) -> None:
    path = tmp_path / "advisor.yaml"
    raw = {"pool": SIM, "publish": publish, "state": {"directory": str(tmp_path / "s")}}
    path.write_text(yaml.safe_dump(raw))
    assert main(["check-config", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "ok" in out
    assert err == (WARNING + "\n" if warned else "")


def test_the_warning_shows_an_ipv6_listen_address_in_brackets() -> None:
    publish = check_config({"pool": SIM, "publish": {"listen": "[::]:9681"}}).publish
    assert exposure_warnings(publish)[0].startswith("publish.listen [::]:9681 is reachable")


class Silent:
    """A pool that is never polled: these tests only serve."""

    def poll(self, now: float) -> Any:
        raise AssertionError("not polled here")

    def cursor(self) -> dict[str, Any]:
        return {}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        pass


def write_config(path: Path, publish: dict[str, Any]) -> Path:
    raw = {
        "pool": {"kind": "condor", "collector": "cm:9618"},
        "publish": publish,
        "state": {"directory": str(path.parent / "state")},
    }
    path.write_text(yaml.safe_dump(raw))
    return path


def test_the_daemon_serves_its_lists_and_a_reload_replaces_them(tmp_path: Path) -> None:
    path = write_config(tmp_path / "advisor.yaml", {"listen": "127.0.0.1:0", "admin": "10.9.9.1"})
    config = load_config(path)
    daemon = Daemon(config, make_policy(config, {}), Silent(), [], lambda: NOW)
    port = int(daemon.start_endpoint().rsplit(":", 1)[1])
    try:
        assert fetch(port, "/explain/pc1")[0] == 403
        assert fetch(port, "/healthz")[0] == 200
        assert daemon.reload(write_config(path, {"listen": "127.0.0.1:0"}), {}, None)
        assert fetch(port, "/explain/pc1")[0] == 404  # admitted again (loopback): no pc1 here
    finally:
        daemon.stop_endpoint()


def test_the_daemon_logs_the_warning_once_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_config(tmp_path / "advisor.yaml", {"listen": "0.0.0.0:0"})
    config = load_config(path)
    daemon = Daemon(config, make_policy(config, {}), Silent(), [], lambda: NOW)
    with caplog.at_level(logging.WARNING, logger="htcondor_advisor.daemon"):
        daemon.start_endpoint()  # loopback-only lists: nobody else can read it meanwhile
        daemon.stop_endpoint()
    warned = [r.getMessage() for r in caplog.records if "publish.allow" in r.getMessage()]
    assert warned == [WARNING.removeprefix("warning: ").replace("0.0.0.0:9681", "0.0.0.0:0")]
