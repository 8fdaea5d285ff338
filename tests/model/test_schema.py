"""The schema engine (:mod:`twinnet.model.schema`): a configuration's fields are its
parameters, and ``from_dict``/``to_dict``, the TOML keys and the flags come from them.

A small configuration declared here exercises the engine alone; then every registered family
is held to what the engine promises (each parameter declared once, round trips, pickling).
"""

import dataclasses
import pickle

import pytest

from twinnet.families import families, presets
from twinnet.model import schema
from twinnet.model.schema import Choice, Flag, Integer, Integers, Parameter, Text, parameter
from twinnet.model.sizes import RouterSizes


def read_pairs(label: str, value):
    """``a=1,b=2`` (or the mapping ``to_dict`` writes) → ``(("a", 1), ("b", 2))``."""
    if isinstance(value, dict):
        return tuple(value.items())
    try:
        return tuple((key, int(amount)) for key, amount in
                     (item.split("=") for item in value.split(",")))
    except (AttributeError, ValueError):
        raise ValueError(f"{label} {value!r}: must be pairs such as a=1,b=2") from None


@dataclasses.dataclass(frozen=True)
class Toy(schema.Configuration):
    family = "toy"
    inputs = (Parameter("double", Integer(1, 50), None, "half of size", "--double"),)

    size: int = parameter(4, Integer(2, 100), "how many")
    shape: str = parameter(lambda values: "tall" if values["size"] > 10 else "wide",
                           Choice(("TALL", "WIDE", "tall", "wide"), fold=str.lower), "shape")
    fast: bool = parameter(False, Flag(), "go fast")
    radices: tuple = parameter((2, 2), Integers(2, 9, (1, 3), "dimensions"), "radices")
    pairs: tuple = parameter((), Text(read_pairs, "a=1", write=dict), "pairs")

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        if values["double"] is not None:
            values["size"] = 2 * values["double"]
        if values["fast"] and values["size"] > 50:
            raise ValueError(f"{names['fast']} with {names['size']} {values['size']}: too big")


def test_defaults_follow_the_values_before_them():
    assert Toy.from_dict({}) == Toy(4, "wide", False, (2, 2), ())
    assert Toy.from_dict({"size": 20}).shape == "tall"
    assert Toy.from_dict({"size": 20, "shape": "WIDE"}).shape == "wide"  # folded


def test_inputs_fold_into_fields_and_are_not_kept():
    toy = Toy.from_dict({"double": 7})
    assert toy.size == 14
    assert "double" not in toy.to_dict() and [p.name for p in Toy.fields()] == [
        "size", "shape", "fast", "radices", "pairs"]
    assert [p.name for p in Toy.parameters()][0] == "double"


def test_to_dict_round_trips_and_writes_plain_values():
    toy = Toy.from_dict({"radices": [3, 4, 5], "pairs": "a=1,b=2", "fast": True})
    written = toy.to_dict()
    assert written == {"family": "toy", "size": 4, "shape": "wide", "fast": True,
                       "radices": [3, 4, 5], "pairs": {"a": 1, "b": 2}}
    assert Toy.from_dict(written) == toy


@pytest.mark.parametrize("values, message", [
    ({"size": 1}, r"^t.toml: size must be an integer from 2 to 100, not 1$"),
    ({"size": "4"}, r"^t.toml: size must be an integer, not '4'$"),
    ({"size": True}, r"^t.toml: size must be an integer, not True$"),
    ({"shape": "round"}, r"t.toml: shape must be one of .*'wide', not 'round'"),
    ({"fast": 1}, r"^t.toml: fast must be true or false, not 1$"),
    ({"radices": [2, 3, 4, 5]}, r"^t.toml: radices 2,3,4,5: must have from 1 to 3 dimensions"),
    ({"radices": [2, 10]}, r"^t.toml: radices\[1\] must be an integer from 2 to 9, not 10$"),
    ({"radices": "2,3"}, r"t.toml: radices must be a sequence of integers"),
    ({"pairs": "a"}, r"^t.toml: pairs 'a': must be pairs such as a=1,b=2$"),
    ({"colour": 1}, r"^t.toml: colour: unknown key; allowed keys: family, double, size, "),
    ({"family": "ring"}, r"^t.toml: family must be 'toy', not 'ring'$"),
    # A value the rules derive (size from double) is named by its key.
    ({"double": 30, "fast": True}, r"^t.toml: fast with size 60: too big$"),
])
def test_each_value_and_rule_names_its_label(values, message):
    with pytest.raises((TypeError, ValueError), match=message):
        Toy.from_dict(values, "t.toml")


def test_labels_name_each_source():
    with pytest.raises(ValueError, match=r"^--size must be an integer from 2 to 100, not 0$"):
        Toy.from_dict({"size": 0, "fast": False}, {"size": "--size", "fast": "--fast"})


FAMILIES = sorted(families())


@pytest.mark.parametrize("name", FAMILIES)
def test_each_parameter_is_declared_once(name):
    """Every field of the configuration is a parameter with a help text and a flag; no name
    or flag twice; the router sizes are the shared declarations themselves."""
    cls = families()[name].configuration
    fields = [field.name for field in dataclasses.fields(cls)]
    parameters = cls.parameters()
    assert sorted(p.name for p in cls.fields()) == sorted(fields)
    assert len({p.name for p in parameters}) == len(parameters)
    flags = [flag for p in parameters for flag in p.flags]  # (--no-<flag> included)
    assert len(set(flags)) == len(flags)
    assert all(p.help and p.flag.startswith("--") for p in parameters)
    shared = {p.name: p for p in RouterSizes.fields()}
    assert {p.name: p for p in parameters if p.name in shared} == shared


@pytest.mark.parametrize("preset", sorted(presets()))
def test_every_preset_round_trips_hashes_and_pickles(preset):
    values = dict(presets()[preset])
    word = values.pop("family")
    family, fixed = {w: f for w, f in _words().items()}[word]
    network = family.network({**values, **fixed})
    again = family.network(network.to_dict())
    assert again == network and hash(again) == hash(network)
    assert pickle.loads(pickle.dumps(network)) == network
    assert again.name == network.name


def _words():
    from twinnet.families import family_words

    return family_words()
