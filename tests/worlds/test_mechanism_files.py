"""Mechanism YAML: what loads, and the errors that name the field, expected and got."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.worlds.mechanisms import (
    MechanismError,
    load_mechanisms,
    mechanisms_next_to,
    parse_mechanisms,
)

DOOR = {"name": "d", "pose": [1, 0, 0], "size": [0.9, 0.05, 2.0]}
LIFT = {"name": "l", "pose": [0, 0, 0], "size": [1, 1], "levels": [0, 3]}


def test_a_file_next_to_the_map_is_read_and_defaults_fill_in(tmp_path):
    (tmp_path / "map.yaml").write_text("image: map.png\n")
    (tmp_path / "mechanisms.yaml").write_text(
        "doors:\n  - {name: d, pose: [1, 0, 0], size: [0.9, 0.05, 2], motion: swing,\n"
        "     cap: {zone: [0, 0, 2, 2], max: 3}}\n"
        "elevators:\n  - {name: l, pose: [0, 0, 0], size: [1, 1], levels: [0, 3, 6],\n"
        "     destination: 2}\n")
    found = mechanisms_next_to(tmp_path / "map.yaml")
    (door,), (lift,) = found.doors, found.elevators
    assert (door.motion, door.zone, door.open_time, door.locked) == ("swing", 1.2, 1.0, False)
    assert door.cap.max == 3 and door.prim().pose == (1.0, 0.0, 1.0, 0.0)
    assert (lift.levels, lift.start, lift.destination) == ((0.0, 3.0, 6.0), 0, 2)
    assert not mechanisms_next_to(tmp_path / "elsewhere" / "map.yaml")


@pytest.mark.parametrize("doc, message", [
    ({"doors": [{**DOOR, "size": [0.9, 2.0]}]},
     "doors[0].size: expected 3 positive finite numbers, got [0.9, 2.0]"),
    ({"doors": [{**DOOR, "motion": "fold"}]},
     "doors[0].motion: expected one of ['slide', 'swing'], got 'fold'"),
    ({"doors": [{**DOOR, "locked": "yes"}]}, "doors[0].locked: expected true or false, got 'yes'"),
    ({"doors": [{**DOOR, "colour": 1}]}, "doors[0]: expected keys among ['name', 'pose', "
     "'size', 'motion', 'open_time', 'hold', 'zone', 'plate', 'locked', 'cap'], got "
     "\"unknown key 'colour'\""),
    ({"doors": [{"name": "d", "size": [1, 1, 1]}]},
     "doors[0].pose: expected a value, got 'nothing (missing)'"),
    ({"doors": [{**DOOR, "cap": {"zone": [2, 0, 1, 1], "max": 1}}]},
     "doors[0].cap.zone: expected [xmin, ymin, xmax, ymax] with min < max, got [2, 0, 1, 1]"),
    ({"doors": [{**DOOR, "cap": {"zone": [0, 0, 1, 1], "max": 0}}]},
     "doors[0].cap.max: expected an integer >= 1, got 0"),
    ({"elevators": [{**LIFT, "levels": [0]}]},
     "elevators[0].levels: expected a list of at least 2 heights, got [0]"),
    ({"elevators": [{**LIFT, "levels": [0, 0]}]},
     "elevators[0].levels: expected distinct heights, one per storey, got [0, 0]"),
    ({"elevators": [{**LIFT, "levels": [0, 3, 3.0]}]},
     "elevators[0].levels: expected distinct heights, one per storey, got [0, 3, 3.0]"),
    ({"elevators": [{**LIFT, "destination": 5}]},
     "elevators[0].destination: expected a level index in [0, 1], got 5"),
    ({"elevators": [{**LIFT, "destination": 0}]},
     "elevators[0].destination: expected a level other than start, got 0"),
    ({"elevators": [{**LIFT, "speed": -1}]}, "elevators[0].speed: expected a number > 0, got -1"),
    ({"doors": [DOOR], "elevators": [{**LIFT, "name": "d"}]},
     "name: expected names unique among doors and elevators, got \"'d' twice\""),
    ({"doors": {"name": "d"}}, "doors: expected a list, got {'name': 'd'}"),
])
def test_bad_fields_are_named_with_what_was_expected_and_what_came(doc, message):
    with pytest.raises(MechanismError, match=re.escape(f"world.yaml: {message}")):
        parse_mechanisms(doc, "world.yaml")


def test_a_missing_or_broken_file_says_so(tmp_path):
    with pytest.raises(MechanismError, match=re.escape("expected an existing file, got no "
                                                       "such file")):
        load_mechanisms(tmp_path / "none.yaml")
    (tmp_path / "bad.yaml").write_text("doors: [\n")
    with pytest.raises(MechanismError, match=re.escape("expected a readable YAML file")):
        load_mechanisms(tmp_path / "bad.yaml")


_scalars = st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5)
_values = st.recursive(_scalars,
                       lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.sampled_from(list(DOOR) + ["levels", "cap", "zone",
                                                                       "motion", "x"]), inner,
                                         max_size=5), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["doors", "elevators"]), _values, max_size=2))
def test_random_documents_load_or_raise_a_mechanism_error(doc):
    try:
        parse_mechanisms(doc)
    except MechanismError:
        pass


def test_lights_are_declared_next_to_the_map_and_checked(tmp_path):
    doc = {"lights": [{"name": "hall", "shape": "rect", "positions": [[2, 0, 2.8], [4, 0, 2.8]],
                       "intensity": 3600, "level": 0.8, "regime": [60, 40]}]}
    found = parse_mechanisms(doc, "m.yaml")
    (hall,) = found.lights
    assert (hall.shape, hall.positions, hall.intensity, hall.level, hall.regime) == (
        "rect", ((2.0, 0.0, 2.8), (4.0, 0.0, 2.8)), 3600.0, 0.8, (60.0, 40.0))
    assert hall.shines(39.0) and not hall.shines(41.0)
    assert not found  # lights alone move nothing: no mechanism tick
    with pytest.raises(MechanismError, match=re.escape(
            "m.yaml: lights[0]: expected a valid light, got \"Light 'hall' level: expected a "
            "number in [0, 1], got -1\"")):
        parse_mechanisms({"lights": [{"name": "hall", "shape": "dome", "level": -1}]}, "m.yaml")
    with pytest.raises(MechanismError, match=re.escape("m.yaml: lights: expected unique light "
                                                       "names, got \"'a' twice\"")):
        parse_mechanisms({"lights": [{"name": "a", "shape": "distant"},
                                     {"name": "a", "shape": "distant"}]}, "m.yaml")
