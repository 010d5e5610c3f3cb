"""The package's version, in a module of its own so that any module can import it
without importing the package's front door (``tile_mlir/__init__.py``)."""

__version__ = "0.1.0"
