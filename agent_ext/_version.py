"""The package's version, in a module of its own so that any layer can read it without a cycle."""

__version__ = "0.1.0"
