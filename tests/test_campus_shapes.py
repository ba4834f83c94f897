"""Pool shapes: the bundled campus is one member, a seed draws the same member every time and
within the shape's ranges, and a mistake in a shapes file is one line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.contract.config_checks import ConfigError
from simulator.campus.scenario import generate_campus, load_campus_config
from simulator.campus.shapes import draw, load_shapes, shape_member
from simulator.sources import SourceError, SourceSpec, assemble

BASE = load_campus_config(None)


def test_the_bundled_campus_is_the_empty_shape() -> None:
    assert shape_member(BASE, load_shapes()["campus"], 7) == BASE


@pytest.mark.parametrize("name", sorted(load_shapes()))
def test_a_seed_draws_one_member_within_the_ranges(name: str) -> None:
    spec = load_shapes()[name]
    one, again, other = (shape_member(BASE, spec, s) for s in (1, 1, 2))
    assert one == again
    for key, value in draw(spec, 1).items():
        low, high = spec[key] if isinstance(spec[key], list) else (spec[key], spec[key])
        assert low <= value <= high, key
    if "machines" in spec:
        low, high = spec["machines"]
        size = sum(c.machines for c in one.clusters)
        assert 0.9 * low <= size <= 1.1 * high
        assert one != other
    if "rooms" in spec:
        assert {c.hours for c in one.clusters} <= set(spec["rooms"])


def test_a_member_is_a_campus_the_generator_replays() -> None:
    config = shape_member(BASE, load_shapes()["small-college"], 3)
    trace = generate_campus(config, days=7, scale=0.2, seed=3)
    spec = SourceSpec(scenario="campus", shape="small-college", days=7, scale=0.2, seed=3)
    assert len(assemble(spec)[0].jobs) == len(trace.jobs) > 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: {machines: [500, 100]}", "a.machines: needs 0 < low <= high"),
        ("a: {never_finish_fraction: 1.5}", "a.never_finish_fraction: must lie in [0, 1)"),
        ("a: {colour: blue}", "a.colour: unknown key"),
        ("a: {rooms: {always: -1}}", "a.rooms: must map opening-hour profiles to weights"),
    ],
)
def test_a_mistake_in_a_shapes_file_names_its_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "shapes.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_shapes(path)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_an_unknown_shape_lists_the_known_ones() -> None:
    with pytest.raises(SourceError, match="unknown shape 'nope'; available: campus, small"):
        assemble(SourceSpec(scenario="campus", shape="nope"))
