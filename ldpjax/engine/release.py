"""One release of an algorithm over real data: one run, a secure key, and its privacy event.

:func:`~ldpjax.engine.simulate` is a simulation driver: every seed and every grid point replays
the same records and inputs, which is what a study of an algorithm wants and what a release
of real data must not do (N seeds x P grid points would use each record N P times under a
claim that covers one run). :func:`release_run` is the release:

* the key must be a secure key (:func:`ldpjax.mechanisms.secure_key`, 128 bits from the OS
  CSPRNG; a key made from a seed is refused) and is used as it is, never converted;
* exactly one run at exactly one point: ``params`` has no grid axes and there is no
  ``num_seeds``, so every record and every input row is read by one run only (a records
  client, :func:`ldpjax.quantile.record_clients`, then reads each record at most ``max_uses``
  times, once by default);
* the algorithm's ``validate`` hook checks the concrete params and inputs before compiling,
  as in ``simulate``, and the result carries the algorithm's ``privacy_event(params)``: the
  per-record claim of this release.

Several releases over the same data compose: run them yourself, each with its own secure key,
and claim ``SelfComposedEvent(event, uses)`` (:mod:`ldpjax.accounting`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax

from ldpjax.engine import record as record_lib
from ldpjax.engine.base import Algorithm
from ldpjax.engine.simulate import SimulationInfo, simulate
from ldpjax.mechanisms.secure import require_secure_key
from ldpjax.types import PRNGKey, PyTree


class ReleaseResult(NamedTuple):
    """What :func:`release_run` returns.

    Attributes:
      record: the recorder's output of the one run (NumPy arrays of the leaf shapes, no seed or
        grid axis): the release.
      event: ``algorithm.privacy_event(params)``, the per-record claim of this release
        (``ldpjax.accounting.epsilon(event, delta)`` gives its epsilon).
      info: how the run went (:class:`~ldpjax.engine.SimulationInfo`; ``num_seeds == 1``).
    """

    record: PyTree
    event: Any
    info: SimulationInfo


def release_run(
    algorithm: Algorithm,
    params: PyTree,
    key: PRNGKey,
    num_steps: int | None = None,
    *,
    inputs: PyTree = None,
    record: record_lib.Recorder | None = None,
) -> ReleaseResult:
    """Release one run of ``algorithm`` over real data, with its per-record privacy claim.

    Args:
      algorithm: an :class:`~ldpjax.engine.Algorithm` with a ``privacy_event`` (a release
        states its claim).
      params: the numeric parameters of one point (no grid axes).
      key: a secure key from :func:`ldpjax.mechanisms.secure_key`; used once, as it is.
      num_steps: horizon T (defaults to the length of ``inputs``).
      inputs: optional time-indexed real data (e.g. a gains matrix), read once.
      record: a :mod:`~ldpjax.engine.record` recorder (default: outputs of the last step).

    Returns:
      A :class:`ReleaseResult` ``(record, event, info)``.

    Raises:
      ValueError: a key that is not a secure key (the message says how to get one), an
        algorithm without ``privacy_event``, a program of several processes, or what the
        algorithm's ``validate`` and the engine's checks refuse (as in ``simulate``).

    Example:
      >>> import jax.numpy as jnp
      >>> from ldpjax import experts
      >>> from ldpjax.mechanisms import secure_key
      >>> from ldpjax.accounting import epsilon
      >>> algorithm = experts.rw_ftpl(experts.FTPLConfig(3, granularity=2**-10))
      >>> gains = jnp.array([[0.2, 0.9, 0.4], [0.5, 0.1, 0.7]])     # real data, in [0, 1]^3
      >>> out = release_run(algorithm, experts.ftpl_params(1.0), secure_key(), inputs=gains)
      >>> out.info.num_seeds, type(out.event).__name__
      (1, 'DiscreteGaussianEvent')
    """
    require_secure_key(key, "release_run")
    if not isinstance(algorithm, Algorithm):
        raise TypeError("algorithm must be an ldpjax.engine.Algorithm(init, step)")
    if algorithm.privacy_event is None:
        raise ValueError(
            "release_run: the algorithm states no privacy_event, so its release has no claim; "
            "give the Algorithm a privacy_event(params)"
        )
    if jax.process_count() > 1:
        raise ValueError(
            "release_run runs in one process (a secure key is drawn per process and never "
            f"shared); this program has {jax.process_count()} processes"
        )
    # one seed, one point, one device: each record and input row is read by this run only
    result = simulate(
        algorithm, params, key, num_steps, num_seeds=1, inputs=inputs, record=record,
        grid_ndim=0, devices=jax.local_devices()[:1], keep_state=False,
    )
    event = algorithm.privacy_event(params)
    rec = jax.tree_util.tree_map(lambda x: x[0], result.record)  # drop the seed axis
    return ReleaseResult(rec, event, result.info)


__all__ = ["ReleaseResult", "release_run"]
