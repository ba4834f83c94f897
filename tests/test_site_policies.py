"""A site's own policy packages, found through real entry points (a ``.dist-info`` on the path, as
pip leaves one): the shipped example replays, and each mistake a site can make in its package is
one line naming the policy and the fix (plugins/contract/registry.py)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import plugins.contract.registry as registry
from advisor.cli import main
from plugins.contract.policy import OptionError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "site-policy"
MISTAKES = """
from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.events import AttemptEnded
from plugins.contract.policy import Option, Policy


class Fine(Policy):
    NAME = "site-fine"
    OPTIONS = {"w": Option(1.0, float, "weight")}

    def advise(self, view, now):
        return Advice()


class NoAdvise(Policy):
    NAME = "site-noadvise"


class NoName(Fine):
    NAME = "policy"


class NoWants(Fine):
    NAME = "site-nowants"

    def observe(self, event):
        pass


class BoolOption(Fine):
    NAME = "site-bool"
    OPTIONS = {"on": Option(False, bool, "a flag")}


class TextDefault(Fine):
    NAME = "site-text"
    OPTIONS = {"w": Option("1.5", float, "weight")}


class Shadow(Fine):
    NAME = "random"


class Negative(Fine):
    NAME = "site-negative"

    def advise(self, view, now):
        return Advice({m.name: MachineAdvice(rank=-1.0) for m in view.machines})
"""
ENTRY_POINTS = {
    "site-fine": "site_mistakes:Fine",
    "site-noadvise": "site_mistakes:NoAdvise",
    "site-noname": "site_mistakes:NoName",
    "site-nowants": "site_mistakes:NoWants",
    "site-bool": "site_mistakes:BoolOption",
    "site-text": "site_mistakes:TextDefault",
    "site-func": "json:dumps",
    "site-missing": "site_mistakez:Fine",
    "random": "site_mistakes:Shadow",
    "site-negative": "site_mistakes:Negative",
}


def installed(where: Path, name: str, entry_points: dict[str, str]) -> None:
    """What pip leaves for a package: its metadata and entry points in a ``.dist-info``."""
    info = where / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{registry.GROUP}]\n{lines}")


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Take the test's packages off the path and out of the module cache afterwards."""
    before = set(sys.modules)
    yield
    for module in set(sys.modules) - before:
        if module.startswith(("site_mistakes", "site_policy")):
            del sys.modules[module]
    importlib.invalidate_caches()


@pytest.fixture
def mistakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_path: None) -> None:
    (tmp_path / "site_mistakes.py").write_text(MISTAKES)
    installed(tmp_path, "site-mistakes", ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.usefixtures("mistakes")
@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("site-noadvise", "does not define advise"),
        ("site-noname", "set NAME = 'site-noname'"),
        ("site-nowants", "WANTS is empty"),
        ("site-bool", "parse=bool"),
        ("site-text", "reads back from its text"),
        ("site-func", "not a subclass of plugins.contract.policy.Policy"),
        ("site-missing", "does not load: ModuleNotFoundError"),
        ("site-fnie", "did you mean 'site-fine'"),
        ("site_mistakes:Fine", "not by module:Class"),
        ("random", "registered by more than one package"),
    ],
)
def test_each_mistake_is_one_line_naming_the_policy_and_the_fix(name: str, said: str) -> None:
    with pytest.raises(OptionError) as caught:
        registry.policy_class(name)
    assert said in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.usefixtures("mistakes")
def test_one_broken_package_hides_no_other_policy(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    found = registry.available()
    assert "site-fine" in found and "frugal" in found
    assert "site-noadvise" not in found and "random" not in found  # refused, both claims
    assert main(["policies"]) == 0
    listed = capsys.readouterr().out
    assert "site-fine" in listed and "frugal" in listed
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "site-missing" in warned and "site-noname" in warned


def test_every_shipped_policy_meets_the_contract_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    # and the real-pool tests' own policy (a set as its default: listed as `--set hold=`)
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "integration" / "policies"))
    for name in registry.registered():
        registry.policy_class(name)
    assert "fixed-advice" in registry.registered()


@pytest.mark.usefixtures("on_path")
def test_the_example_site_policy_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    installed(tmp_path, "site-policy", {"low-power-first": "site_policy.policy:LowPowerFirst"})
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    out = tmp_path / "out"
    argv = ["replay", "--scenario", "campus", "--scale", "0.05", "--days", "3"]
    argv += ["--policy", "low-power-first", "--set", "held_room=robinson-lib-g"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["policy"] == "low-power-first/1" and summary["jobs"]["completed"] > 0
    capsys.readouterr()


@pytest.mark.usefixtures("mistakes")
def test_a_replay_whose_advice_keeps_every_job_off_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", "--scenario", "campus", "--scale", "0.05", "--days", "2", "--no-progress"]
    assert main([*argv, "--policy", "site-negative", "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr().err
    assert "note: no job completed" in said and "a negative or NaN rank" in said
    # jobs still running at the end were not kept off: no note blames the advice
    jobs = tmp_path / "long.csv"
    jobs.write_text("submit,job_id,user,runtime,remove\n1709542800,1.0,a,172800,\n")
    short = ["--shape", "small-college", "--days", "1", "--reboot-hour", "none"]
    assert (
        main([*argv[:3], *short, "--jobs", str(jobs), "--policy", "site-fine", "--no-progress"])
        == 0
    )
    assert "note: no job completed" not in capsys.readouterr().err
