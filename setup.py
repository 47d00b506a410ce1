"""Only the C extension lives here; everything else is in pyproject.toml."""

from setuptools import Extension, setup

# Alg. 4 split paths and junction-tree sizes in C (privsample/synth/partition.py and selection.py fall back to
# NumPy / Python when these were not built)
setup(
    ext_modules=[
        Extension("privsample.synth.splitpath", ["privsample/synth/splitpath.c"], optional=True),
        Extension("privsample.synth.graphcells", ["privsample/synth/graphcells.c"], optional=True),
    ]
)
