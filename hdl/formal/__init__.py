"""Formal properties of the router and the route computes, proven with SymbiYosys.

- :mod:`.properties`: named properties and the assertions that state them;
- :mod:`.stages`: the router's stages as the properties observe them (subclasses that keep
  references to their registers and buffers, logic unchanged);
- :mod:`.environment`: the neighbours of a lone router, as assumptions (upstream links send
  whole packets on VCs with credits, downstream buffers return credits for flits they hold);
- :mod:`.router`: the router's property set;
- :mod:`.route_spec`: route computes written again from the papers' formulas (twin DOR,
  DESTRO and the header routing there; :mod:`.king_spec` for the king family,
  :mod:`.twisted_spec` for twisted tori; :mod:`.spec_common` their shared arithmetic), and
  the properties that a route compute equals its specification for every input;
- :mod:`.mutants`: routers with one known bug each, to show that each property can fail;
- :mod:`.sby`: runs SymbiYosys on a property set and reads its verdicts.
"""
