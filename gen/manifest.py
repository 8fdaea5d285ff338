"""A typed view of a generated network's manifest (``<name>.manifest.json``, written by
:func:`twinnet.gen.generate.describe`): what the simulation glue and the traffic program read
of it, by attribute. The JSON itself stays the interface for other tools (docs/verilog.md
describes every key); :attr:`Manifest.data` holds it whole, for a family's own section.
"""

import dataclasses
import json
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class HeadFlit:
    """The head flit's layout: its ``width`` and ``fields`` (each ``name``, ``offset``,
    ``width``, least significant first)."""

    width: int
    fields: tuple[dict, ...]

    def offsets(self) -> dict[str, int]:
        """Field name → its lowest bit."""
        return {field["name"]: field["offset"] for field in self.fields}

    def has(self, name: str) -> bool:
        return any(field["name"] == name for field in self.fields)


@dataclasses.dataclass(frozen=True)
class Traffic:
    """The traffic harness's section: its Verilog ``top`` (``verilog`` None: no harness top,
    the program runs without one), the source and sink ``modules``, the C++ ``program``,
    ``engine`` header, ``sources`` and ``tables`` (None when flits are too wide for it), the
    ``patterns`` and ``faults`` it knows by index, its rates' ``rate_bits``, the terminal
    ``digits`` (route field, radix), ``ordered`` (each pair's packets checked in order) and
    the top's ``ports``."""

    top: str
    verilog: str | None
    modules: tuple[str, ...]
    program: str | None
    engine: str | None
    sources: tuple[str, ...]
    tables: str | None
    patterns: tuple[str, ...]
    faults: tuple[str, ...]
    rate_bits: int
    digits: tuple[tuple[str, int], ...]
    length_classes: int
    ordered: bool
    ports: tuple[dict, ...]

    @classmethod
    def from_dict(cls, data: dict) -> "Traffic":
        values = {field.name: data[field.name] for field in dataclasses.fields(cls)}
        values["digits"] = tuple((field, radix) for field, radix in data["digits"])
        return cls(**{key: tuple(value) if isinstance(value, list) else value
                      for key, value in values.items()})


@dataclasses.dataclass(frozen=True)
class Manifest:
    """The manifest's sections a simulation reads (see the module docstring); ``traffic``,
    ``link_counters``, ``axi_stream`` and ``trace`` are None when the network was generated
    without them."""

    data: dict
    family: str
    top: str
    parameters: dict
    pe_count: int
    head_flit: HeadFlit
    modules: dict[str, str]
    routers: tuple[dict, ...]
    links: tuple[dict, ...]
    terminals: tuple[str, ...]
    trace: dict | None
    deadlock: dict | None
    traffic: Traffic | None
    link_counters: dict | None
    axi_stream: dict | None

    @classmethod
    def of(cls, data: "dict | Manifest") -> "Manifest":
        """The view of ``data`` (the manifest's JSON as read, or a view already)."""
        if isinstance(data, Manifest):
            return data
        head = data["head_flit"]
        return cls(data=data, family=data["family"], top=data["top"],
                   parameters=data["parameters"], pe_count=data["derived"]["pe_count"],
                   head_flit=HeadFlit(head["width"], tuple(head["fields"])),
                   modules=data["modules"], routers=tuple(data["routers"]),
                   links=tuple(data["links"]), terminals=tuple(data["terminals"]),
                   trace=data.get("trace"), deadlock=data.get("deadlock"),
                   traffic=(Traffic.from_dict(data["traffic"]) if data.get("traffic")
                            else None),
                   link_counters=data.get("link_counters"), axi_stream=data.get("axi_stream"))

    @classmethod
    def read(cls, path) -> "Manifest":
        """The manifest at ``path``."""
        return cls.of(json.loads(Path(path).read_text()))

    @property
    def max_packet_length(self) -> int:
        """The network's longest packet, in flits."""
        return self.parameters["max_packet_length"]
