"""Lowering variants of tile ops. Importing this package registers them."""

from . import local  # noqa: F401
