"""Parameter validation shared by the model's configuration objects.

Each check raises before anything is built, with a message that names the parameter, the value
given and what is allowed: ``TypeError`` for a wrong type, ``ValueError`` for a bad value.
"""

from collections.abc import Iterable


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` if it is an integer within ``[minimum, maximum]``, else raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if minimum is not None and maximum is not None and not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer from {minimum} to {maximum}, not {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, not {value}")
    return value


def check_choice(name: str, value, allowed: Iterable) -> object:
    """Return ``value`` if it is one of ``allowed``, else raise a ``ValueError`` listing them."""
    allowed = tuple(allowed)
    if value not in allowed:
        listed = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {listed}, not {value!r}")
    return value


def check_int_tuple(name: str, values, *, length: int | None = None, minimum: int | None = None,
                    min_length: int = 1) -> tuple[int, ...]:
    """Return ``values`` as a tuple of integers, each ``>= minimum``, of the given length."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of integers, not {values!r}")
    values = tuple(values)
    if length is not None and len(values) != length:
        raise ValueError(f"{name} must have {length} entries, not {len(values)}: {values}")
    if len(values) < min_length:
        raise ValueError(f"{name} must have at least {min_length} entries, not {len(values)}")
    for index, value in enumerate(values):
        check_int(f"{name}[{index}]", value, minimum=minimum)
    return values


def check_switch_ports(name: str, values, port_count: int) -> tuple[int, ...]:
    """Return ``values`` as a tuple of distinct switch ports from 0 to ``port_count - 1``
    (the ports of a 2k-port switch: ``port_count = 2k``), else raise naming ``name``."""
    ports = check_int_tuple(name, values, minimum=0, min_length=0)
    stray = [p for p in ports if p >= port_count]
    if stray:
        raise ValueError(f"{name} ports must be from 0 to {port_count - 1} (2k - 1 for "
                         f"k = {port_count // 2}), not {stray}")
    if len(set(ports)) != len(ports):
        raise ValueError(f"{name} must not repeat a port, not {list(ports)}")
    return ports


def labels_of(values: dict, labels) -> dict[str, str]:
    """How messages name each key of ``values``: ``labels`` is a dict (key → label such as
    ``--k`` or ``net.toml: k``; missing keys are named as themselves) or one source name
    (``net.toml`` → ``net.toml: k``)."""
    if isinstance(labels, dict):
        return {key: labels.get(key, key) for key in values}
    return {key: f"{labels}: {key}" for key in values}
