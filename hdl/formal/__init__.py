"""Formal properties of the router and the route computes, proven with SymbiYosys.

- :mod:`.properties`: named properties and the assertions that state them;
- :mod:`.stages`: the router's stages as the properties observe them (subclasses that keep
  references to their registers and buffers, logic unchanged);
- :mod:`.environment`: the neighbours of a lone router, as assumptions (upstream links send
  whole packets on VCs with credits, downstream buffers return credits for flits they hold);
- :mod:`.router`: the router's property set;
- :mod:`.route_spec`: the properties that a route compute equals its specification for every
  input, and the header routing's specification; each family names its own specification
  (:attr:`twinnet.families.Family.route_spec`: a route compute written again from the
  paper's formulas), written with :mod:`.spec_common`'s arithmetic;
- :mod:`.mutants`: routers with one known bug each, to show that each property can fail;
- :mod:`.sby`: runs SymbiYosys on a property set and reads its verdicts.
"""
