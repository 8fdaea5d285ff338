"""The errors the command line reports in one line, shared by every layer that raises them.

- :class:`UsageError`: a flag, TOML key or file that cannot be read into a value (exit
  status 2, like a value a configuration refuses);
- :class:`CheckFailed`: a run that went through but whose checks failed (exit status 1).
"""


class UsageError(ValueError):
    """A command-line argument, configuration value or file that cannot be read into a value
    (the command line reports it as ``twinnet: <message>``, exit status 2)."""


class CheckFailed(Exception):
    """A run that went through but whose checks failed (e.g. a scoreboard error in a
    simulation): reported as ``twinnet: <message>`` with exit status 1."""
