"""ldpjax: batched, differentiable JAX for learning under local differential privacy.

Subpackages: :mod:`ldpjax.accounting` (differentiable privacy accounting),
:mod:`ldpjax.mechanisms` (local randomizers), :mod:`ldpjax.engine` (scan/vmap/shard/chunk
simulation engine), :mod:`ldpjax.experts`, :mod:`ldpjax.quantile`, :mod:`ldpjax.bandits`
(the three paper families), :mod:`ldpjax.frequency` (frequency and mean estimation),
:mod:`ldpjax.datasets` (data loaders), :mod:`ldpjax.validation` (public input checks),
:mod:`ldpjax.testing` (the conformance checker for your own algorithm).
The application that runs the paper studies, the bench and the ``ldpjax`` command is a
separate import package of the same distribution, ``ldpjax_experiments``; the library imports
nothing of it.
"""

from ldpjax import _xla

XLA_WORKAROUND = _xla.apply_workaround()

__version__ = "0.1.0"
