"""The STARTD_CRON hook against hostile endpoints: it prints the advice whole or nothing at all.

The hook is a standalone script (no package): its validators are loaded from the file path, and
it also runs as a subprocess against real HTTP servers on 127.0.0.1 (port 0, a thread each).
Whatever it lets through must be a ClassAd literal of its attribute's type (checked with classad2),
and what ``advisor/condor/attributes.py`` writes for real advice must pass unchanged.
"""

from __future__ import annotations

import ast
import contextlib
import glob
import importlib.machinery
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any

import classad2
import pytest
from conftest import PROJECT_ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.condor.attributes import advice_attributes, attribute_lines, classad_literal
from plugins.contract.advice import PRIOR_HOURS_CLASSES, MachineAdvice, PowerAdvice
from plugins.contract.registry import available

HOOK_PATH = PROJECT_ROOT / "deploy/hook/htcondor-advisor-hook"


def load_hook() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("advisor_hook", str(HOOK_PATH))
    spec = importlib.util.spec_from_loader("advisor_hook", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


hook: Any = load_hook()

KIND = {
    "AdvisorRank": "number",
    "AdvisorRankByPriorHours": "numbers",
    "AdvisorHold": "boolean",
    "AdvisorControl": "boolean",
    "AdvisorPredictedIdle": "number",
    "AdvisorPower": "string",
    "AdvisorUpdated": "number",
    "AdvisorExpires": "number",
    "AdvisorPolicy": "string",
}
FULL = MachineAdvice(
    rank=2.5,
    rank_by_prior_hours=tuple(k / 4 - 3 for k in range(PRIOR_HOURS_CLASSES)),
    hold=True,
    predicted_idle_s=5400.0,
    power=PowerAdvice.MAY_SLEEP,
    arm="control",
)


def encoded(advice: MachineAdvice, updated: float, expires: float, policy: str = "ranker/1") -> str:
    return attribute_lines(advice_attributes(advice, updated, expires, policy))


def good_body(policy: str = "ranker/1") -> str:
    now = time.time()
    return encoded(FULL, now, now + 3600, policy)


def python_literal(text: str) -> Any:
    """What the text means as a literal, parsed without ClassAds (a call or reference fails)."""
    if text.startswith("{"):
        return [python_literal(item.strip()) for item in text.strip("{} ").split(",")]
    if text.startswith('"'):
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else float(text)


def assert_classad_literal(name: str, text: str) -> None:
    """``text`` evaluates in ClassAds to exactly its literal meaning, of ``name``'s type."""
    value = classad2.ExprTree(text).eval()
    kind = KIND[name]
    if kind == "number":
        assert type(value) in (int, float)
    elif kind == "numbers":
        assert isinstance(value, list) and all(type(v) in (int, float) for v in value)
    elif kind == "boolean":
        assert isinstance(value, bool)
    else:
        assert isinstance(value, str)
    assert value == python_literal(text), (name, text, value)


def assert_trusted(lines: list[str], now: float, later: float | None = None) -> None:
    """The invariants of anything the hook prints, checked between ``now`` and ``later``."""
    values = dict(line.split(" = ", 1) for line in lines)
    assert len(values) == len(lines) and set(hook.REQUIRED) <= set(values) <= set(KIND)
    for name, text in values.items():
        assert_classad_literal(name, text)
    expires = float(values["AdvisorExpires"])
    assert expires <= (now if later is None else later) + hook.MAX_AHEAD_S  # (past: withdrawn)
    assert float(values["AdvisorUpdated"]) <= expires


# --- the whitelist and the encoder --------------------------------------------------------------


def test_the_whitelist_is_what_the_encoder_writes() -> None:
    full = advice_attributes(FULL, 1.0, 2.0, "p")
    minimal = advice_attributes(MachineAdvice(), 1.0, 2.0, "p")
    assert set(hook.ATTRIBUTES) == set(full) == set(KIND)
    assert set(hook.REQUIRED) == set(minimal)
    assert hook.MAX_LIST == PRIOR_HOURS_CLASSES


def test_every_policy_label_passes_the_hook() -> None:
    """``AdvisorPolicy`` is NAME/VERSION: a label the hook refused would silence every machine."""
    for cls in available().values():
        assert hook.is_string(classad_literal(f"{cls.NAME}/{cls.VERSION}")), cls


finite = st.floats(allow_nan=False, allow_infinity=False)
policies = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=128
)


@given(
    rank=finite,
    ranks=st.none() | st.lists(finite, min_size=1, max_size=PRIOR_HOURS_CLASSES).map(tuple),
    hold=st.booleans(),
    idle=st.none() | st.floats(min_value=0, allow_infinity=False),
    power=st.sampled_from(list(PowerAdvice)),
    arm=st.sampled_from([None, "control", "treated"]),
    age=st.floats(0, 3600),
    ahead=st.floats(0.001, 86399),
    policy=policies,
)
def test_encoded_advice_passes_the_hook_unchanged(
    rank: float,
    ranks: tuple[float, ...] | None,
    hold: bool,
    idle: float | None,
    power: PowerAdvice,
    arm: str | None,
    age: float,
    ahead: float,
    policy: str,
) -> None:
    now = time.time()
    advice = MachineAdvice(rank, ranks, hold, idle, power, arm=arm)
    body = encoded(advice, now - age, now + ahead, policy)
    lines = hook.accept(body.encode(), now)
    assert "".join(line + "\n" for line in lines) == body
    assert_trusted(lines, now)


@pytest.mark.parametrize(
    ("check", "kind"),
    [
        ("is_number", "number"),
        ("is_numbers", "numbers"),
        ("is_boolean", "boolean"),
        ("is_string", "string"),
    ],
)
@given(data=st.data())
def test_validators_admit_only_classad_literals_of_their_type(
    check: str, kind: str, data: st.DataObject
) -> None:
    """Random text, and text built from the hook's own grammar (edges: huge, tiny, exponents)."""
    number = st.from_regex(hook.NUMBER_RE, fullmatch=True)
    candidates = {
        "number": number,
        "numbers": st.lists(number, max_size=30).map(lambda xs: "{ " + ", ".join(xs) + " }"),
        "boolean": st.sampled_from(["true", "false", "True", "FALSE", "1", "undefined"]),
        "string": st.from_regex(r'"[ -~]{0,130}"', fullmatch=True),
    }[kind]
    text = data.draw(st.one_of(candidates, st.text(max_size=40)))
    if getattr(hook, check)(text):
        name = next(n for n, k in KIND.items() if k == kind and n != "AdvisorPower")
        assert_classad_literal(name, text)


# --- hostile bodies, in process -----------------------------------------------------------------

HOSTILE_VALUES = [
    "time() + 3600",
    "true || x",
    "True",
    "TRUE",
    "undefined",
    "error",
    "x",
    "MY.AdvisorRank",
    "1 + 1",
    "-(1)",
    "1e999",
    "nan",
    "inf",
    "0x10",
    "010",
    "99999999999999999999",
    "1.",
    ".5",
    "1,0",
    '"a" + "b"',
    '"\\""',
    '"x" || true',
    "{ 1.0, x }",
    "{ 1.0, time() }",
    "{ }",
    "{ " + ", ".join(["1.0"] * 25) + " }",
    "[ a = 1 ]",
    "ifThenElse(true, 1, 2)",
    '"' + "x" * 129 + '"',
]
OTHER_LINES = [
    "START = true",
    "Requirements = false",
    "IsOwner = false",
    "AdvisorStart = true",
    "advisorrank = 1.0",
    "AdvisorRank= 1.0",
    " AdvisorRank = 1.0",
    "AdvisorRank = 1.0 ",
    "AdvisorRank = 1.0 # comment",
    "AdvisorHold = false",
    "",
    "-AdvisorHold",
]


NOW = time.time()
"""The clock of the generated bodies (not the clock at each draw: generation must repeat)."""


@st.composite
def hostile_bodies(draw: st.DrawFn) -> bytes:
    """A real answer, broken in a few ways (most of the time just one); or random bytes."""

    def rarely() -> bool:
        return draw(st.integers(0, 3)) == 0

    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=200))
    ahead = 3600.0 if not rarely() else draw(st.sampled_from([-1.0, 0.0, 86401.0, 1e9]))
    lines = encoded(FULL, NOW, NOW + ahead).splitlines()
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["value", "swap", "insert", "drop", "dup"]))
        name, value = lines[at].split(" = ", 1) if " = " in lines[at] else (lines[at], "")
        if how == "value":
            value = draw(st.sampled_from(HOSTILE_VALUES) | st.text(max_size=20))
            lines[at] = f"{name} = {value}"
        elif how == "swap":  # another attribute's (valid) value: maybe of the wrong type
            lines[at] = f"{name} = " + draw(st.sampled_from(lines)).split(" = ", 1)[-1]
        elif how == "insert":
            lines.insert(at, draw(st.sampled_from(OTHER_LINES) | st.text(max_size=40)))
        elif how == "drop":
            del lines[at]
        else:
            lines.insert(at, lines[at])
    newline = "\n" if not rarely() else draw(st.sampled_from(["\r\n", "\r", "\n\n"]))
    body = "".join(line + newline for line in lines).encode("utf-8", errors="surrogatepass")
    if rarely():
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.binary(max_size=4)) + body[at:]
    if rarely():
        body = body[: draw(st.integers(0, len(body)))]
    return body


@settings(max_examples=400)
@given(body=hostile_bodies())
def test_hostile_bodies_are_printed_whole_or_not_at_all(body: bytes) -> None:
    lines = hook.accept(body, NOW)
    if lines:
        assert "".join(line + "\n" for line in lines).encode() == body
        assert_trusted(lines, NOW)


@given(ahead=st.floats(1, 86000), at=st.integers(0, 100), policy=policies)
def test_one_hostile_line_spoils_the_whole_answer(ahead: float, at: int, policy: str) -> None:
    """A valid answer with any one value or line from the hostile lists prints nothing."""
    good = encoded(FULL, NOW, NOW + ahead, policy).splitlines()
    assert hook.accept("".join(ln + "\n" for ln in good).encode(), NOW) == good
    at %= len(good)
    for bad in HOSTILE_VALUES + OTHER_LINES:
        for how in ("value", "insert"):
            lines = list(good)
            if how == "value":
                lines[at] = lines[at].split(" = ")[0] + " = " + bad
            else:
                lines.insert(at, bad)
            assert hook.accept("".join(ln + "\n" for ln in lines).encode(), NOW) == [], lines


# --- hostile endpoints, over HTTP ---------------------------------------------------------------

Reply = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Served:
    url: str
    hits: list[str] = field(default_factory=list)


@contextlib.contextmanager
def serve(reply: Reply) -> Iterator[Served]:
    """An HTTP server on 127.0.0.1 answering every GET with ``reply``."""
    served = Served("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.hits.append(self.path)
            with contextlib.suppress(OSError):  # the hook hung up
                reply(self)

        def log_message(self, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()


def answer(
    body: bytes | str, status: int = 200, length: int | None = -1, headers: tuple = ()
) -> Reply:
    """Reply with ``body``; ``length`` -1: its true Content-Length, None: no Content-Length."""
    data = body.encode() if isinstance(body, str) else body

    def reply(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        if length is not None:
            handler.send_header("Content-Length", str(len(data) if length == -1 else length))
        for name, value in headers:
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    return reply


def run_hook(
    url: str, timeout: str = "2", env: dict[str, str] | None = None, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [python, str(HOOK_PATH), url, "pc1.example.org", timeout],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert_reported(out)
    return out


def assert_reported(out: subprocess.CompletedProcess[str]) -> None:
    """Printed advice (or nothing, for a machine without advice) exits 0 silently; no usable
    answer exits 1 with exactly one line on stderr (what the startd logs) and nothing printed."""
    if out.returncode == 0:
        assert out.stderr == ""
    else:
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.startswith("htcondor-advisor-hook: ") and out.stderr.count("\n") == 1


def test_a_good_answer_is_printed_unchanged() -> None:
    body = good_body()
    with serve(answer(body)) as server:
        assert run_hook(server.url).stdout == body
    assert server.hits == ["/advice/pc1.example.org"]
    with serve(answer("")) as server:  # no advice for this machine
        assert run_hook(server.url).stdout == ""


def replace_line(body: str, name: str, line: str | None) -> str:
    lines = [ln for ln in body.splitlines() if not ln.startswith(f"{name} = ")]
    return "".join(ln + "\n" for ln in lines) + (f"{line}\n" if line is not None else "")


def expires_at(ahead: float) -> Callable[[str], str]:
    return lambda b: replace_line(b, "AdvisorExpires", f"AdvisorExpires = {time.time() + ahead!r}")


BROKEN: dict[str, Callable[[str], str | bytes]] = {
    "expires expression": lambda b: replace_line(
        b, "AdvisorExpires", "AdvisorExpires = time() + 3600"
    ),
    "hold expression": lambda b: replace_line(b, "AdvisorHold", "AdvisorHold = true || x"),
    "hold True, not the encoder's true": lambda b: replace_line(
        b, "AdvisorHold", "AdvisorHold = True"
    ),
    "rank reference": lambda b: replace_line(b, "AdvisorRank", "AdvisorRank = MY.Rank"),
    "rank overflows to inf": lambda b: replace_line(b, "AdvisorRank", "AdvisorRank = 1e999"),
    "list with a call": lambda b: replace_line(
        b, "AdvisorRankByPriorHours", "AdvisorRankByPriorHours = { 1.0, time() }"
    ),
    "power not in the set": lambda b: replace_line(b, "AdvisorPower", 'AdvisorPower = "off"'),
    "string with an escape": lambda b: replace_line(
        b, "AdvisorPolicy", 'AdvisorPolicy = "a\\" || true || \\""'
    ),
    "START": lambda b: b + "START = true\n",
    "Requirements": lambda b: "Requirements = false\n" + b,
    "unknown Advisor attribute": lambda b: b + "AdvisorStart = true\n",
    "duplicate": lambda b: b + "AdvisorHold = false\n",
    "missing expires": lambda b: replace_line(b, "AdvisorExpires", None),
    "missing hold": lambda b: replace_line(b, "AdvisorHold", None),
    "a day and more ahead": expires_at(86400 + 60),
    "updated after expires": lambda b: replace_line(
        b, "AdvisorUpdated", f"AdvisorUpdated = {time.time() + 7200!r}"
    ),
    "CRLF line ends": lambda b: b.replace("\n", "\r\n"),
    "CRLF injection": lambda b: replace_line(
        b, "AdvisorPolicy", 'AdvisorPolicy = "x"\r\nSTART = true'
    ),
    "NUL": lambda b: replace_line(b, "AdvisorPolicy", 'AdvisorPolicy = "x\x00"'),
    "non-UTF-8": lambda b: b.encode() + b'AdvisorPolicy = "\xff\xfe"\n',
    "non-ASCII UTF-8": lambda b: replace_line(b, "AdvisorPolicy", 'AdvisorPolicy = "caf\u00e9"'),
    "no final newline": lambda b: b.rstrip("\n"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_answer_prints_nothing(name: str) -> None:
    with serve(answer(BROKEN[name](good_body()))) as server:
        assert run_hook(server.url).stdout == ""


BROKEN_REPLIES: dict[str, Callable[[bytes], Reply]] = {
    "truncated": lambda b: answer(b, length=len(b) + 50),
    "no Content-Length": lambda b: answer(b, length=None),
    "Content-Length short": lambda b: answer(b, length=5),
    "two Content-Lengths": lambda b: answer(b, headers=(("Content-Length", "9999"),)),
    "chunked": lambda b: answer(
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(b), b),
        length=None,
        headers=(("Transfer-Encoding", "chunked"),),
    ),
    "status 500": lambda b: answer(b, status=500),
    "oversized": lambda b: answer(b + b"#" * (64 * 1024)),
}


@pytest.mark.parametrize("name", list(BROKEN_REPLIES))
def test_a_broken_reply_prints_nothing(name: str) -> None:
    with serve(BROKEN_REPLIES[name](good_body().encode())) as server:
        assert run_hook(server.url).stdout == ""


def test_a_redirect_is_not_followed() -> None:
    with serve(answer(good_body())) as elsewhere:
        location = (("Location", f"{elsewhere.url}/advice/pc1.example.org"),)
        with serve(answer("", status=302, headers=location)) as server:
            assert run_hook(server.url).stdout == ""
    assert server.hits and not elsewhere.hits


def test_a_proxy_in_the_environment_is_not_used() -> None:
    direct = good_body("direct")
    with serve(answer(good_body("proxy"))) as proxy, serve(answer(direct)) as server:
        env = {k: v for k, v in os.environ.items() if k.lower() != "no_proxy"}
        for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "all_proxy", "ALL_PROXY"):
            env[name] = proxy.url
        assert run_hook(server.url, env=env).stdout == direct
    assert not proxy.hits and server.hits


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_slow_server_meets_the_total_deadline(where: str) -> None:
    """One byte a second: every read is quick, the whole would take minutes."""
    body = good_body().encode()
    head = b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
    done = threading.Event()

    def drip(handler: BaseHTTPRequestHandler) -> None:
        if where == "body":
            handler.wfile.write(head)
        for byte in (head if where == "headers" else b"") + body:
            if done.is_set():
                return
            handler.wfile.write(bytes([byte]))
            time.sleep(1)

    with serve(drip) as server:
        began = time.monotonic()
        out = run_hook(server.url, timeout="2")
        elapsed = time.monotonic() - began
        done.set()
    assert out.stdout == "" and server.hits
    assert elapsed < 2 + 3


def test_hostile_bodies_over_http_are_printed_whole_or_not_at_all() -> None:
    """The property test through the hook's real fetch and main (in process, for speed)."""
    serving = [b""]

    def reply(handler: BaseHTTPRequestHandler) -> None:
        answer(serving[0])(handler)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(body=hostile_bodies())
    def prints_whole_or_nothing(body: bytes) -> None:
        serving[0] = body
        printed, said = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(said):
            before = time.time()
            status = hook.main(["hook", server.url, "pc1.example.org", "5"])
            after = time.time()
        assert status == (1 if body and not printed.getvalue() else 0)
        assert said.getvalue().count("\n") == status  # one line for each answer not taken
        if printed.getvalue():
            assert printed.getvalue().encode() == body
            assert_trusted(printed.getvalue().splitlines(), before, after)

    with serve(reply) as server:
        prints_whole_or_nothing()
        assert len(server.hits) >= 100  # the bodies did go over HTTP


# --- the execute point's Python -----------------------------------------------------------------


def test_the_hook_is_python_3_9() -> None:
    ast.parse(HOOK_PATH.read_text(), feature_version=(3, 9))
    found = [
        shutil.which("python3.9"),
        *glob.glob(os.path.expanduser("~/.pyenv/versions/3.9*/bin/python3.9")),
    ]
    pythons = [p for p in found if p and _runs(p)]
    if not pythons:
        pytest.skip("no Python 3.9 interpreter here (the syntax check above still ran)")
    body = good_body()
    with serve(answer(body)) as server:
        assert run_hook(server.url, python=pythons[0]).stdout == body
    with serve(answer(BROKEN["expires expression"](body))) as server:
        assert run_hook(server.url, python=pythons[0]).stdout == ""


def _runs(python: str) -> bool:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip() == "(3, 9)"


def test_arguments() -> None:
    assert hook.parse_timeout(None) == hook.DEFAULT_TIMEOUT_S
    assert hook.parse_timeout("2.5") == 2.5
    for bad in ("x", "nan", "inf", "-1", "0"):
        assert hook.parse_timeout(bad) == hook.DEFAULT_TIMEOUT_S
    assert hook.advice_path("/base/", "pc 1/../x") == "/base/advice/pc%201%2F..%2Fx"
    for url in ("ftp://127.0.0.1/", "file:///etc/passwd", "127.0.0.1:9680", "http://"):
        assert hook.get(url, "pc1", 1.0) is None
