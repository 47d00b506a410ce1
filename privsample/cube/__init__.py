"""Noise-free private sampling on the Boolean cube {-1, 1}^p.

Guarantee: pure epsilon-DP for **replace-one** neighbours with n public (Boedihardjo, Strohmer and
Vershynin, Thm 12.2): the k released points are i.i.d. exact draws from a density h* on a reduced space
drawn independently of the data, and h* is kept within [delta/m, Delta/m], so one replaced record changes
every output probability by a bounded factor. epsilon is the certified epsilon of
:func:`privsample.cube.bounds.certified_epsilon` times the solver margin of
:func:`privsample.cube.sampler.solver_margin`; the argument, its reconstructed parts and its floating-point
caveats are in :mod:`privsample.cube.sampler`.

Papers: Boedihardjo, Strohmer and Vershynin (2021), *Private sampling: a noiseless approach for generating
differentially private synthetic data* (arXiv 2109.14839): the mechanism and its theorems; Pierquin,
Zimmermann and Boussard (2023), *Practical considerations on using private sampling for synthetic data*
(arXiv 2312.07139): the LP and QP that compute h*, the bounds and their tables.

Modules: :mod:`~privsample.cube.walsh` (Walsh features without the feature matrix),
:mod:`~privsample.cube.qp`, :mod:`~privsample.cube.lp` and
:mod:`~privsample.cube.vertex` (h* and lambda*), :mod:`~privsample.cube.solver`
(both steps), :mod:`~privsample.cube.bounds` (privacy and accuracy bounds), :mod:`~privsample.cube.sampler`
(the release) and :mod:`~privsample.cube.pipeline` (from a table file to a release).
"""
