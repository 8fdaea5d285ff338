"""Pure-Python reference model of twinnet's networks (no Amaranth).

Every test trusts this package, so it is written from the definitions in the project's
papers' definitions, never from the RTL. Modules:

- :mod:`.checks` — parameter validation shared by every configuration object;
- :mod:`.schema` — parameters declared once, as configuration fields: from them come
  ``from_dict``/``to_dict``, the TOML keys and the command line's flags;
- :mod:`.sizes` — the router sizes every family shares (the base of every configuration);
- :mod:`.widths` — the bit width of an index;
- :mod:`.torus` — k-ary n-cubes (tori and meshes) with per-dimension radix, plain DOR;
- :mod:`.twin` — twin tori: port configurations (A–J, C_Best, card-0 lists), cards, PEs;
- :mod:`.twin_routing` — DOR adapted to the twin node, modes ``none``, ``vc`` and ``bubble``;
- :mod:`.twin_analysis` — internal-link transit counts, PE-level distances, deadlock checks;
- :mod:`.network` — a twin torus plus the router sizes of its RTL;
- :mod:`.king_network`, :mod:`.twisted_network` — king-family and twisted networks as built;
- :mod:`.fat_tree` — k-ary n-trees, DESTRO and random up-routing, path counts, link loads;
- :mod:`.twin_switch` — the twin switch: a 2k-port switch split over halves α and β;
- :mod:`.king` — mesh, diagonal and king meshes/tori: distances, records, adaptive grades, escape
  channels, broadcast;
- :mod:`.twist` — twisted tori: metrics, twist sweeps, node symmetry;
- :mod:`.deadlock` — channel-dependency graphs and their cycle check.
"""
