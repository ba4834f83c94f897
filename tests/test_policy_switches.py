"""Every policy's switches take the same words (on/off, true/false, yes/no, 1/0): frugal's are
kept as on/off whichever word turned them, so its results do not depend on the word."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.cli import main
from advisor.daemon.config import check_config
from plugins.bandits.placement import ComputerBandit
from plugins.contract.config_checks import ConfigError
from plugins.contract.policy import OptionError, Policy, parse_options
from plugins.contract.registry import policy_class
from plugins.frugal.policy import FrugalPolicy
from plugins.power.or_ppo import OrPpoPolicy

WORDS = "on/off, true/false, yes/no, 1/0"
SWITCHES = ("futile_later", "cut_short", "cut_short_batches", "reboot_wait", "payback_queue")
ON = [("on", "on"), ("true", "on"), ("Yes", "on"), ("1", "on")]
OFF = [("off", "off"), ("FALSE", "off"), ("no", "off"), ("0", "off")]


@pytest.mark.parametrize(("word", "kept"), [*ON, *OFF])
def test_frugal_keeps_any_switch_word_as_on_or_off(word: str, kept: str) -> None:
    assert parse_options(FrugalPolicy, dict.fromkeys(SWITCHES, word)) == (
        parse_options(FrugalPolicy, {}) | dict.fromkeys(SWITCHES, kept)
    )
    assert parse_options(ComputerBandit, {"prune_full": word})["prune_full"] is (kept == "on")
    assert parse_options(OrPpoPolicy, {"sample": word})["sample"] is (kept == "on")


@pytest.mark.parametrize(
    ("policy", "option", "value"),
    [
        (FrugalPolicy, "cut_short", "maybe"),
        (FrugalPolicy, "reboot_wait", True),  # no text: skipped the parser, refused alike
        (ComputerBandit, "prune_full", "maybe"),
        (OrPpoPolicy, "sample", "y"),
    ],
)
def test_a_word_no_switch_takes_is_refused_with_every_word_it_takes(
    policy: type[Policy], option: str, value: object
) -> None:
    with pytest.raises(OptionError) as raised:
        parse_options(policy, {option: value})
    assert str(raised.value).startswith(f"policy {policy.NAME!r}: option {option}={value!r}: ")
    assert str(raised.value).endswith(WORDS)


def test_the_daemon_configuration_takes_them_too() -> None:
    options = {"cut_short": "false", "reboot_wait": False, "payback_queue": "yes"}
    config = check_config(
        {"pool": {"kind": "sim"}, "policy": {"name": "frugal", "options": options}}
    )
    parsed = parse_options(FrugalPolicy, config.policy["options"])
    assert [parsed[k] for k in options] == ["off", "off", "on"]
    with pytest.raises(
        ConfigError, match=rf"policy.options: .*cut_short='nope': must be a switch: {WORDS}$"
    ):
        check_config(
            {
                "pool": {"kind": "sim"},
                "policy": {"name": "frugal", "options": {"cut_short": "nope"}},
            }
        )


def test_a_replay_is_the_same_to_the_byte_whichever_word_turned_a_switch(tmp_path: Path) -> None:
    # bandit-cluster's prune_full changes this small replay (on and off differ), so a word read
    # as the wrong value would show; frugal's switches are read into the same on/off text
    small = ["replay", "--scenario", "campus", "--days", "2", "--scale", "0.03", "--no-progress"]
    written = {}
    for word in ("on", "off", "false", "no"):
        out = tmp_path / word
        switch = ["--set", f"prune_full={word}", "--out", str(out)]
        assert main([*small, "--policy", "bandit-cluster", *switch]) == 0
        written[word] = (out / "jobs.csv").read_bytes()
    assert written["off"] == written["false"] == written["no"] != written["on"]
    frugal = policy_class("frugal")
    for word in ("off", "false", "no", "0"):
        assert parse_options(frugal, {"cut_short": word})["cut_short"] == "off"


@pytest.mark.parametrize("text", ["inf", "-inf", "nan"])
def test_a_number_that_is_not_finite_is_refused_in_a_replay_as_in_the_daemons_file(
    text: str,
) -> None:
    with pytest.raises(OptionError, match=rf"option sigma='{text}': must be a finite number"):
        parse_options(policy_class("bandit-cluster"), {"sigma": text})
