"""Command line: ``privsample synth | sample | schema | check | evaluate | demo | mbde | cube | draw``.

:mod:`privsample.cli.app` assembles the Typer app from one module per command group
(:mod:`~privsample.cli.synth`, :mod:`~privsample.cli.schema`, :mod:`~privsample.cli.evaluate`,
:mod:`~privsample.cli.cube`, :mod:`~privsample.cli.draw`, :mod:`~privsample.cli.mbde`), which share the output
helpers of :mod:`privsample.cli.common` and the option types of :mod:`privsample.cli.options`; none of them
imports the app.
"""

from privsample.cli.app import app, main

__all__ = ["app", "main"]
