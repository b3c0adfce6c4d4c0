"""The test suite's machinery, one concern per module; ``tests/conftest.py`` imports their hooks
and fixtures (pytest finds hooks and fixtures defined or imported in a conftest module).

* :mod:`tests.plugins.compile_cache`: JAX's persistent compilation cache for the session.
* :mod:`tests.plugins.memory`: bounds each process's memory (drops compiled kernels above a
  limit, freezes what collection made).
* :mod:`tests.plugins.schedule`: module order under pytest-xdist and the early start of long
  subprocesses (:func:`tests.plugins.schedule.early_start`).
* :mod:`tests.plugins.profile`: the per-test CPU profile (``LDPJAX_TEST_CPU_LOG``).
"""
