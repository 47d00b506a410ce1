"""Only the C extension lives here; everything else is in pyproject.toml."""

from setuptools import Extension, setup

# Alg. 4 split paths in C (privsample/synth/partition.py falls back to NumPy when this was not built)
setup(ext_modules=[Extension("privsample.synth._splitpath", ["privsample/synth/_splitpath.c"], optional=True)])
