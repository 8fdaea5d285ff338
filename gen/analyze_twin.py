"""``twinnet analyze`` subcommands for twin tori (filled in by the twin-torus model)."""


def register(analyses) -> None:
    pass
