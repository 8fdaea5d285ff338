"""Generators (configuration to files) and the ``twinnet`` command line."""
