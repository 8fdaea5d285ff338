"""Named properties: each assertion belongs to one property, found again by its source line
in the prover's report."""

import traceback
from dataclasses import dataclass, field

from amaranth.hdl import Assert


@dataclass(frozen=True)
class Property:
    """A named claim about a unit.

    Attributes:
        name: short identifier (``credit_counter_range``).
        text: what it says, in one sentence.
        invariant: a strengthening invariant (asserted and proven like the others, stated so
            that induction can close; reported with them).
    """

    name: str
    text: str
    invariant: bool = False


@dataclass
class PropertySet:
    """The properties of one proof (one SymbiYosys job) and where their assertions are.

    Parameters:
        unit: what is proven (``router card0``, ``route compute``).
        properties: the :class:`Property` list, in report order.
        left_out: names of properties not asserted (e.g. the invariants, when only the base
            case is wanted).
    """

    unit: str
    properties: list
    left_out: frozenset = frozenset()
    locations: dict = field(default_factory=dict)

    def __post_init__(self):
        self.by_name = {prop.name: prop for prop in self.properties}

    def check(self, m, name: str, test, *, src_loc_at: int = 0, part: str | None = None
              ) -> None:
        """Assert ``test`` as part of property ``name``; the assertion's source location is
        the caller's line (``src_loc_at`` frames further out), which names the property in
        the prover's report. Its message is the property's name, ``name.part`` with ``part``:
        a proof with one induction step per property has one per part of a property that
        names parts (:func:`~.sby.split_verdicts`)."""
        if name not in self.by_name:
            raise ValueError(f"property {name!r} is not one of {', '.join(self.by_name)}")
        caller = traceback.extract_stack(limit=2 + src_loc_at)[0]
        location = f"{caller.filename}:{caller.lineno}"
        if self.locations.setdefault(location, name) != name:
            raise ValueError(f"{location} asserts both {self.locations[location]!r} and "
                             f"{name!r}; one line must state one property")
        if name not in self.left_out:
            message = name if part is None else f"{name}.{part}"
            m.d.comb += Assert(test, message, src_loc_at=1 + src_loc_at)

    def name_at(self, location: str) -> str | None:
        """The property whose assertion is at ``location`` (``file:line``), or None (an
        assertion of a library component, e.g. a FIFO's own pointer checks)."""
        return self.locations.get(location)
