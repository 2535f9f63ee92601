"""The exact family's arithmetic: moments, held-out rows, Gaussian and ridge fits.

No JAX and no training loop: the previous loss L_{t-1} of these models
depends on the data only through sums, which are kept exactly
(:mod:`.moments`) and turned into a classifier in closed form
(:mod:`.gaussian`, :mod:`.least_squares`). The estimators are in
:mod:`skcl._exact.estimators`; the base they share is in :mod:`skcl._exact.base`.
"""
