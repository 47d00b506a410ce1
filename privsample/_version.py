"""The package version (saved in every model file), apart so that any module can read it without
importing the public API (:mod:`privsample`)."""

__version__ = "0.1.0"
