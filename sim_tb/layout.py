"""Pack and unpack bit fields described by :meth:`twinnet.hdl.flit.FlitFormat.describe`.

Pure Python (no cocotb, no Amaranth), so cocotb modules, Amaranth testbenches and other tools
share it. A field list is ``[{"name", "offset", "width"}, ...]``.
"""


class Fields:
    """A field list: :meth:`pack` a dict of field values into an integer and back."""

    def __init__(self, fields: list[dict]):
        self.fields = {f["name"]: (f["offset"], f["width"]) for f in fields}
        self.width = max((o + w for o, w in self.fields.values()), default=0)

    def __contains__(self, name: str) -> bool:
        return name in self.fields

    def pack(self, values: dict) -> int:
        """Integer with each named field set; unknown names and too-large values raise."""
        word = 0
        for name, value in values.items():
            if name not in self.fields:
                raise KeyError(f"no field {name!r}; fields: {sorted(self.fields)}")
            offset, width = self.fields[name]
            if not 0 <= value < 1 << width:
                raise ValueError(f"field {name!r} is {width} bits wide; {value} does not fit")
            word |= value << offset
        return word

    def unpack(self, word: int) -> dict:
        return {name: (word >> offset) & ((1 << width) - 1)
                for name, (offset, width) in self.fields.items()}

    def get(self, word: int, name: str) -> int:
        offset, width = self.fields[name]
        return (word >> offset) & ((1 << width) - 1)
