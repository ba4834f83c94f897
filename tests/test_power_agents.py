"""or-ppo runs only a trained agent: refused without one (naming train-power), refused when its
network reads another observation, adapted to another cluster size; hosts read the file."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from dedicatedkit import random_workload, tiny_agent

from advisor.agent_files import SHIPPED, read_agent, with_agent
from advisor.cli import main
from advisor.daemon.config import check_config
from plugins.contract.config_checks import ConfigError
from plugins.contract.policy import OptionError, PolicyContext
from plugins.power.or_ppo import OrPpoPolicy
from plugins.power.ppo import init_params
from simulator.dedicated.catalog import catalogued, load_days
from simulator.dedicated.episode import DayEpisode

SMALL = ["replay", "--scenario", "campus", "--days", "2", "--scale", "0.02", "--no-progress"]


def write_agent(path: Path, params: dict[str, np.ndarray], meta: dict[str, object]) -> Path:
    arrays = {f"p_{k}": v for k, v in params.items()}
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)  # type: ignore[arg-type]
    return path


def test_without_an_agent_or_ppo_refuses_and_names_train_power(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(OptionError, match="train-power"):
        OrPpoPolicy(PolicyContext({}))
    assert main([*SMALL, "--policy", "or-ppo", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a trained agent" in err[0] and "train-power" in err[0]
    assert main([*SMALL, "--policy", "or-ppo", "--set", "agent=nope", "--out", str(tmp_path)]) == 2
    assert "no shipped agent of that name" in capsys.readouterr().err


def test_a_directory_given_as_the_agent_is_named_as_one_with_the_file_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """train-power's ``--out`` given in place of its agent file: the error says it is a
    directory and names the file to give (the one found there, else train-power's name)."""
    out = tmp_path / "trained"
    out.mkdir()
    given = ["--policy", "or-ppo", "--set", f"agent={out}", "--out", str(tmp_path / "r")]
    assert main([*SMALL, *given]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(
        f"agent '{out}': a directory, not an agent file; name the agent file train-power wrote "
        "(train-power --out DIR writes DIR/or-ppo-LOG-agent.npz), or a shipped agent (hpc2n, nasa)"
    )
    agent = write_agent(out / "or-ppo-mine-agent.npz", tiny_agent(4)["params"], {})
    write_agent(out / "or-ppo-mine.npz", tiny_agent(4)["params"], {})  # a checkpoint: not named
    with pytest.raises(ConfigError) as raised:
        options = {"agent": str(out)}
        check_config({"pool": {"kind": "sim"}, "policy": {"name": "or-ppo", "options": options}})
    assert str(raised.value) == (
        f"policy.options.agent: agent '{out}': a directory, not an agent file; name one of the "
        f"agent files in it: {agent}"
    )


def test_an_agent_reading_another_observation_is_refused_with_the_reason(tmp_path: Path) -> None:
    other = init_params(100, 8, 9, np.random.default_rng(0))
    with pytest.raises(OptionError, match=r"reads 100 inputs, but this or-ppo observes 20 x 51"):
        OrPpoPolicy(PolicyContext({}), {"agent": {"params": other}})
    path = write_agent(tmp_path / "old.npz", other, {"log": "old"})
    assert (
        main([*SMALL, "--policy", "or-ppo", "--set", f"agent={path}", "--out", str(tmp_path)]) == 2
    )


def test_an_agent_trained_on_another_size_adapts_and_explains_its_decision() -> None:
    agent = tiny_agent(3) | {"meta": {"cluster": {"nodes": 128, "cores_per_node": 1}}}
    for nodes in (4, 12):
        policy = OrPpoPolicy(PolicyContext({}), {"agent": agent})
        episode = DayEpisode(random_workload(np.random.default_rng(nodes), nodes, 2, 20))
        for _ in range(30):
            view = episode.view()
            episode.step(policy.advise(view, view.now))
        said = policy.explain("node0")["or-ppo decision"]
        assert f"of {nodes} nodes" in said["action"]
        assert sum(said["observation"][s] for s in ("off", "idle", "computing")) <= nodes
        assert said["trained for"] == {"nodes": 128, "cores_per_node": 1}
        rebuilt = OrPpoPolicy(PolicyContext({}), {"agent": "from the snapshot"})
        rebuilt.load_state(json.loads(json.dumps(policy.state_dict())))  # as explain --state-dir
        assert rebuilt.explain("node0") == policy.explain("node0")


def test_hosts_read_the_agent_file_train_power_writes(tmp_path: Path) -> None:
    params = tiny_agent(4)["params"]
    path = write_agent(tmp_path / "a.npz", params, {"cluster": {"nodes": 8}})
    read = read_agent(str(path))
    assert read["meta"]["file"] == str(path) and read["meta"]["cluster"] == {"nodes": 8}
    assert all(np.array_equal(read["params"][k], v) for k, v in params.items())
    given = with_agent("or-ppo", {"agent": str(path), "base_t": "1"})
    assert given["base_t"] == "1" and isinstance(given["agent"], dict)
    assert with_agent("timeout", {"t": "0"}) == {"t": "0"}
    assert (
        main([*SMALL, "--policy", "or-ppo", "--set", f"agent={path}", "--out", str(tmp_path)]) == 0
    )


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["nasa", "hpc2n"])
def test_a_shipped_agent_makes_its_recorded_decisions_on_its_recorded_day(
    name: str, shared_data: Path
) -> None:
    record = json.loads((SHIPPED / "agents.json").read_text())[name]
    log = catalogued(name, str(shared_data))
    assert hashlib.sha256(Path(log.path).read_bytes()).hexdigest() == record["log"]["sha256"]
    day = load_days(log)[1][record["recorded_day"]["position"]]
    assert day.index == record["recorded_day"]["day"]
    policy = OrPpoPolicy(PolicyContext({}), with_agent("or-ppo", {"agent": name}))
    assert policy.trained["cluster"] == record["log"]["cluster"]
    episode, actions = DayEpisode(day.jobs), []
    while not episode.done:
        view = episode.view()
        episode.step(policy.advise(view, view.now))
        assert policy.last is not None
        actions.append(policy.last[1])
    runs = [[a, len(list(group))] for a, group in itertools.groupby(actions)]
    assert runs == record["recorded_day"]["actions"]
