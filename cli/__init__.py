"""The ``twinnet`` command line: :mod:`twinnet.cli.main` parses and dispatches; each
``*_cmd`` and ``analyze_*`` module adds its subcommands."""
