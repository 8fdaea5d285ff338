"""Parameters declared once: a network configuration's fields are its parameters.

A family's configuration is a frozen dataclass deriving from :class:`Configuration`; each of its
fields is declared with :func:`parameter`, which gives the parameter's domain, the values it
takes (:class:`Integer`, :class:`Number`, :class:`Choice`, :class:`Flag`, :class:`Integers`,
:class:`Numbers`, :class:`Text`, :class:`Path`), its default and its help text. Everything
else comes from those declarations (a simulation run's settings are :class:`Parameter` s with
the same domains, :mod:`twinnet.sim_tb.settings`):

- :meth:`Configuration.from_dict` (TOML files, presets, manifests and the command line's
  values all go through it): unknown keys, each value's type and range, the defaults, then
  the class's cross-field :meth:`Configuration.rules`, every message naming the value's label
  (``--side``, ``net.toml: side``, ``preset 002-kt16 (--preset): side``), the value and what
  is allowed;
- :meth:`Configuration.to_dict`, the manifest's ``parameters`` and what ``from_dict`` reads
  back;
- the command line's flags, with their help (:mod:`twinnet.cli.gen_cmd` reads
  :meth:`Configuration.parameters`).

The router sizes every family shares (flit width, packet length, buffer depth, pipeline,
:class:`twinnet.model.sizes.RouterSizes`) are declared once, in the base class.
"""

import dataclasses
import functools
import inspect
import pathlib
from collections.abc import Callable, Iterable

from . import checks


@dataclasses.dataclass(frozen=True)
class Integer:
    """An integer from ``minimum`` to ``maximum`` (None: unbounded)."""

    minimum: int | None = None
    maximum: int | None = None

    def check(self, label: str, value):
        return checks.check_int(label, value, minimum=self.minimum, maximum=self.maximum)

    def allowed(self) -> str:
        if self.minimum is None:
            return "an integer" if self.maximum is None else f"at most {self.maximum}"
        if self.maximum is None:
            return f"at least {self.minimum}"
        return f"{self.minimum} to {self.maximum}"


@dataclasses.dataclass(frozen=True)
class Choice:
    """One of ``choices``; ``fold`` (e.g. ``str.upper``) normalises a text value first."""

    choices: tuple
    fold: Callable | None = None

    def check(self, label: str, value):
        if self.fold is not None and isinstance(value, str):
            value = self.fold(value.strip())
        return checks.check_choice(label, value, self.choices)

    def allowed(self) -> str:
        return ", ".join(map(str, self.choices))


@dataclasses.dataclass(frozen=True)
class Flag:
    """True or false (on the command line, a flag without a value)."""

    def check(self, label: str, value):
        if not isinstance(value, bool):
            raise ValueError(f"{label} must be true or false, not {value!r}")
        return value

    def allowed(self) -> str:
        return "true or false"


@dataclasses.dataclass(frozen=True)
class Integers:
    """A list of ``lengths`` (a range of counts) integers, each from ``minimum`` to
    ``maximum`` (None: unbounded); ``noun`` names the entries in messages. Held as a
    tuple."""

    minimum: int
    maximum: int | None
    lengths: tuple[int, int]
    noun: str = "values"

    def check(self, label: str, value):
        values = checks.check_int_tuple(label, value, min_length=0)
        least, most = self.lengths
        if not least <= len(values) <= most:
            count = (f"{least}" if least == most else f"{least} or {most}" if most == least + 1
                     else f"from {least} to {most}")
            raise ValueError(f"{label} {','.join(map(str, values))}: must have {count} "
                             f"{self.noun}, not {len(values)}")
        for index, item in enumerate(values):
            checks.check_int(f"{label}[{index}]", item, minimum=self.minimum,
                             maximum=self.maximum)
        return values

    def allowed(self) -> str:
        upper = f" to {self.maximum}" if self.maximum is not None else " or more"
        return f"{self.lengths[0]} to {self.lengths[1]} {self.noun}, each {self.minimum}{upper}"


@dataclasses.dataclass(frozen=True)
class Text:
    """A value written as text and read by ``read(label, value)``, which returns the value
    held (any type) or raises naming ``label``; ``example`` shows the form, ``write`` turns
    the value held back into what a TOML file or the manifest holds (default: as held)."""

    read: Callable
    example: str
    write: Callable | None = None

    def check(self, label: str, value):
        return self.read(label, value)

    def allowed(self) -> str:
        return f"e.g. {self.example}"


@dataclasses.dataclass(frozen=True)
class Number:
    """A finite real number from ``minimum`` to ``maximum`` (None: unbounded), above
    ``minimum`` when ``above``; in a message, ``noun`` (e.g. ``a probability``) comes before
    the range and ``note`` (a reason) after it."""

    minimum: float | None = None
    maximum: float | None = None
    above: bool = False
    noun: str = ""
    note: str = ""

    def check(self, label: str, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{label} must be a number, not {value!r}")
        low = (self.minimum is None or value > self.minimum if self.above
               else self.minimum is None or value >= self.minimum)
        if value != value or not low or (self.maximum is not None and value > self.maximum):
            raise ValueError(f"{label} {value}: must be {self.allowed()}{self.note}")
        return value

    def allowed(self) -> str:
        return f"{self.noun} {self._range()}" if self.noun else self._range()

    def _range(self) -> str:
        if self.minimum is None:
            return "a number" if self.maximum is None else f"at most {self.maximum:g}"
        if self.above:
            upper = "" if self.maximum is None else f" and at most {self.maximum:g}"
            return f"above {self.minimum:g}{upper}"
        if self.maximum is None:
            return f"at least {self.minimum:g}"
        return f"from {self.minimum:g} to {self.maximum:g}"


@dataclasses.dataclass(frozen=True)
class Numbers:
    """A list of from 1 to ``most`` numbers, each as :class:`Number` ``each`` allows; ``noun``
    names the entries in messages. Held as a tuple."""

    each: Number
    most: int
    noun: str = "values"

    def check(self, label: str, value):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise TypeError(f"{label} must be a list of numbers, not {value!r}")
        shown = ",".join(map(str, value))
        if not 1 <= len(value) <= self.most:
            raise ValueError(f"{label} {shown}: must have from 1 to {self.most} {self.noun}, "
                             f"not {len(value)}")
        for item in value:
            try:
                self.each.check(label, item)
            except ValueError:
                raise ValueError(f"{label} {shown}: {item} is out of range; each must be "
                                 f"{self.each.allowed()}{self.each.note}") from None
        return tuple(value)

    def allowed(self) -> str:
        return f"1 to {self.most} {self.noun}, each {self.each.allowed()}"


@dataclasses.dataclass(frozen=True)
class Path:
    """A file or folder path (held as a :class:`pathlib.Path`)."""

    def check(self, label: str, value):
        if not isinstance(value, (str, pathlib.PurePath)) or not str(value).strip():
            raise ValueError(f"{label} must be a file or folder path, not {value!r}")
        return pathlib.Path(value)

    def allowed(self) -> str:
        return "a path"


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One parameter: its ``name`` (the TOML key and field), ``domain`` (the value's type and
    range), ``default`` (a value, or a function of the values before it, or None: derived),
    ``help`` and the command-line ``flag`` (default ``--`` and the name with dashes)."""

    name: str
    domain: Integer | Number | Choice | Flag | Integers | Numbers | Text | Path
    default: object
    help: str
    flag: str

    def default_for(self, values: dict):
        return self.default(values) if callable(self.default) else self.default

    @property
    def negatable(self) -> bool:
        """A :class:`Flag` with no default of its own (None: derived from the others) is
        given on or off."""
        return isinstance(self.domain, Flag) and self.default is not False

    @property
    def flags(self) -> tuple[str, ...]:
        """Its command-line options: ``flag``, and ``--no-<flag>`` where it is negatable."""
        return (self.flag, f"--no-{self.flag[2:]}") if self.negatable else (self.flag,)


def parameter(default, domain, help: str, *, flag: str | None = None):
    """A dataclass field that is a parameter (see :class:`Parameter`); a callable ``default``
    is resolved by :meth:`Configuration.from_dict` from the values declared before it (the
    class's own, not the router sizes, which come after them; the field itself defaults to
    None)."""
    return dataclasses.field(default=None if callable(default) else default,
                             metadata={"parameter": (domain, default, help, flag)})


class Configuration:
    """A family's network configuration whose dataclass fields are its parameters (see the
    module docstring). Subclasses are frozen dataclasses and set :attr:`family`."""

    #: The family's name: the ``topology`` key of its TOML files and presets.
    family = ""
    #: Parameters that are not fields: other ways of giving a field (e.g. a torus's ``n`` and
    #: ``k`` for its ``radices``), folded into the fields by :meth:`rules`.
    inputs: tuple[Parameter, ...] = ()

    @classmethod
    def parameters(cls) -> tuple[Parameter, ...]:
        """The parameters: the inputs, the family's own fields, then the shared router
        sizes."""
        return cls.inputs + cls.fields()

    @classmethod
    def fields(cls) -> tuple[Parameter, ...]:
        """The parameters that are fields, the family's own first."""
        return _fields(cls)

    @classmethod
    def allowed_keys(cls) -> tuple[str, ...]:
        """The keys a description of this family may hold."""
        return ("family", *(p.name for p in cls.parameters()))

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        """The cross-field rules, on the values checked one by one (all present, defaults
        resolved); raise ``ValueError`` naming the labels in ``names``. Subclasses extend."""

    @classmethod
    def from_dict(cls, values: dict, labels: dict | str = "configuration"):
        """A configuration from plain values (the keys of :meth:`allowed_keys`; ``labels`` as for
        :func:`twinnet.model.checks.labels_of`). Raises ``TypeError``/``ValueError`` naming
        the label, the value and what is allowed, before anything is built."""
        checked = cls.checked(values, labels)
        return cls(**{each.name: checked[each.name] for each in cls.fields()})

    @classmethod
    def checked(cls, values: dict, labels: dict | str = "configuration") -> dict:
        """:meth:`from_dict`'s checks without the configuration: every parameter's value,
        checked or its default, by name, after the cross-field :meth:`rules`."""
        names = checks.labels_of(values, labels)
        keys = cls.allowed_keys()
        unknown = [key for key in values if key not in keys]
        if unknown:
            raise ValueError(f"{names[unknown[0]]}: unknown key; allowed keys: "
                             f"{', '.join(keys)}")
        if values.get("family", cls.family) != cls.family:
            raise ValueError(f"{names['family']} must be {cls.family!r}, not "
                             f"{values['family']!r}")
        checked = {}
        for each in cls.parameters():
            names.setdefault(each.name, each.name)
            given = values.get(each.name)
            checked[each.name] = (each.default_for(checked) if given is None else
                                  each.domain.check(names[each.name], given))
        cls.rules(checked, names)
        return checked

    def to_dict(self) -> dict:
        """The parameters as written, JSON/TOML-ready; :meth:`from_dict` inverts."""
        return {"family": self.family, **{
            p.name: _plain(getattr(self, p.name) if getattr(p.domain, "write", None) is None
                           else p.domain.write(getattr(self, p.name)))
            for p in self.fields()}}


def _plain(value):
    """A value as JSON and TOML write it (tuples as lists)."""
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def describe(parameters: Iterable[Parameter]) -> str:
    """The parameters' keys and what each allows, for a help text."""
    return "; ".join(f"{p.name} ({p.domain.allowed()})" for p in parameters)


@functools.cache
def _fields(cls: type) -> tuple[Parameter, ...]:
    """:meth:`Configuration.fields` of ``cls``, worked out once per class (the command line
    reads every family's fields each time it builds its parser)."""
    declared = []
    for field in dataclasses.fields(cls):
        if "parameter" in field.metadata:
            domain, default, help, flag = field.metadata["parameter"]
            declared.append(Parameter(field.name, domain, default, help,
                                      flag or "--" + field.name.replace("_", "-")))
    own = set(inspect.get_annotations(cls))
    return tuple(sorted(declared, key=lambda p: p.name not in own))
