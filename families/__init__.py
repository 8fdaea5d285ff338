"""The family registry: every topology family, twinnet's own and other packages', found
through the entry-point group :data:`GROUP`.

A package adds a family by declaring, in its ``pyproject.toml``::

    [project.entry-points."twinnet.families"]
    mynet = "my_package:MyNetworkFamily"

where the object named is a :class:`Family` subclass (see :mod:`twinnet.families.contract`
for the contract, and ``examples/ring`` for a whole family in one small package). twinnet's
own four are registered the same way. The registry sits below the generator (:mod:`twinnet.gen`),
the simulation glue (:mod:`twinnet.sim_tb`), the boards and the command line, so that none of
them names a family.
"""

import functools
from importlib.metadata import entry_points

from .contract import Family, escape_verdict, out_of_range, verdict

__all__ = ["GROUP", "Family", "default_family", "escape_verdict", "families", "family",
           "family_for", "family_of", "family_words", "out_of_range", "presets", "verdict"]

#: The entry-point group families register under.
GROUP = "twinnet.families"


@functools.cache
def families() -> dict[str, Family]:
    """Every registered family, by name, twinnet's own first. Raises ``TypeError`` naming the
    entry point when one does not name a :class:`Family` subclass or its name differs from the
    family's."""
    found = {}
    points = sorted(entry_points(group=GROUP),
                    key=lambda point: (not point.value.startswith("twinnet."), point.name))
    for point in points:
        cls = point.load()
        if not (isinstance(cls, type) and issubclass(cls, Family)):
            raise TypeError(f"entry point {point.name} = {point.value} (group {GROUP}) must "
                            "name a twinnet.families.Family subclass")
        if cls.name != point.name:
            raise TypeError(f"entry point {point.name} = {point.value} (group {GROUP}) names "
                            f"the family {cls.name!r}: the names must be the same")
        found.setdefault(point.name, cls())
    return found


def family(name: str) -> Family:
    """The registered family ``name``; ``ValueError`` naming the registered ones otherwise."""
    registered = families()
    if name not in registered:
        raise ValueError(f"family {name!r} is not registered; the families are "
                         f"{', '.join(registered)} (a package adds one through the entry-point "
                         f"group {GROUP})")
    return registered[name]


def default_family() -> Family:
    """The family built when the command line names none (:attr:`Family.default`)."""
    chosen = [each for each in families().values() if each.default]
    if len(chosen) != 1:
        raise TypeError(f"exactly one registered family must be the default "
                        f"(Family.default), not {len(chosen)}: "
                        f"{', '.join(each.name for each in chosen) or 'none'}")
    return chosen[0]


def family_words() -> dict[str, tuple[Family, dict]]:
    """The words that name a family on the command line: each family's name, and each of its
    :attr:`Family.aliases` (a word for the family with some values fixed, e.g. ``torus``: the
    twin-torus family with configuration ``torus``), word → (family, fixed values)."""
    words = {}
    for each in families().values():
        words[each.name] = (each, {})
        for alias, fixed in each.aliases.items():
            words.setdefault(alias, (each, fixed))
    return words


#: What every preset fixes besides its own values: the split router without its bypass, the
#: router that the papers' figures, the presets' FPGA reports and their proofs were measured
#: with (docs/router.md; ``--bypass`` gives it back).
PRESET_ROUTER = {"bypass": False}


def presets() -> dict[str, dict]:
    """Every family's presets, name → configuration values (with ``family``: the family's
    name or one of its words; :data:`PRESET_ROUTER` under each)."""
    return {name: {**PRESET_ROUTER, **values} for each in families().values()
            for name, values in each.presets.items()}


def family_for(config) -> Family:
    """The family whose configuration class ``config`` is an instance of."""
    for each in families().values():
        if isinstance(config, each.configuration):
            return each
    raise TypeError(f"{type(config).__name__} is not the configuration of a registered family "
                    f"({', '.join(families())})")


def family_of(manifest: dict) -> Family:
    """The family of a generated network, from its manifest's ``family``."""
    return family(manifest["family"])
