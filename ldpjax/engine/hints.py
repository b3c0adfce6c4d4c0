"""How the engine executes an algorithm: speed hints that change neither the steps nor their law.

An :class:`~ldpjax.engine.Algorithm` is a contract of four fields (``init``, ``step``,
``validate``, ``privacy_event``): what it computes and what it claims. How a run is laid out
and compiled is a separate, frozen record, :class:`ExecutionHints`, that the caller passes to
:func:`ldpjax.engine.simulate` (``hints=``) and :func:`ldpjax.engine.rollout`. A family that
knows a faster setting for its step exposes it beside its builder (``ldpjax.experts.EXPERTS_HINTS``,
``ldpjax.quantile.DP_SGD_HINTS``, ``ldpjax.bandits.epsilon_greedy_hints(config)``,
``ldpjax.bandits.GITTINS_HINTS``). Every hint
keeps the steps, their keys and their order; a hint can change float results in the last bits
(XLA contracting ``a * b + c`` into one fused multiply-add in one program and not in another),
never their law. The measurements behind each family's choice are in ``docs/pages/engine.md``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class ExecutionHints:
    """Static execution settings of one ``simulate`` / ``rollout`` call (hashable, checked).

    Attributes:
      grid_major: ``True`` when the step's results do not depend on how the engine lays a
        batch out: on one device :func:`ldpjax.engine.simulate` then ``vmap``-s over grid
        points and, inside, over seeds (:func:`ldpjax.engine.rollout.kernels`), so the work
        that depends on the params only is done once per grid point, and with common random
        numbers the step keys and random words once per seed. XLA may contract a product and a
        sum into one fused multiply-add in one layout and not in the other, so a step that
        combines values the layouts broadcast differently in ``a * b + c`` can round
        differently: set it only for steps whose float arithmetic on such values is exact or
        free of that pattern, and test the records against the flat layout (bit-identical).
        Ignored on a mesh of several devices and for a padded batch. Default ``False``: one
        ``vmap`` over the runs.
      scan_unroll: an int >= 1, the ``unroll`` of the engine's ``lax.scan`` over time: that
        many steps per trip of the compiled loop. For a small step (a few dozen operations per
        run, as the bandits' per-visitor policy) the loop's own cost per trip is a large share
        of the step and unrolling pays; a large step gains nothing and compiles for longer.
        The steps, their keys and their order are unchanged; float results can differ from
        ``scan_unroll=1``'s in the last bits (a multiply-add contracted in one body and not the
        other), not in law. Default 1.
      cpu_compiler_options: XLA options, as ``(name, value)`` pairs, for the engine's kernels
        on a CPU backend (ignored on GPU/TPU); part of the compile cache's key.
        :data:`ldpjax.engine.ELEMENTAL_EMITTERS` (XLA CPU's elemental emitters instead of its
        fusion emitters) compiles the experts and DP-SGD steps faster at the same speed and
        makes Local SGD and the bandits' binomial loops slower. The options change code
        generation only: results can differ from the default options' in the last bits
        (contracted multiply-adds), not in law. Default ``()``: XLA's defaults.

    Raises:
      ValueError: naming the field, for ``grid_major`` not a bool, ``scan_unroll`` not an
        integer >= 1, or ``cpu_compiler_options`` not a sequence of ``(str, value)`` pairs.

    Example:
      >>> from ldpjax.engine import ELEMENTAL_EMITTERS, ExecutionHints
      >>> ExecutionHints(scan_unroll=2).scan_unroll
      2
      >>> ExecutionHints(cpu_compiler_options=ELEMENTAL_EMITTERS).cpu_compiler_options
      (('xla_cpu_use_fusion_emitters', False),)
      >>> ExecutionHints(scan_unroll=0)
      Traceback (most recent call last):
      ...
      ValueError: ExecutionHints.scan_unroll must be an integer >= 1; got 0
    """

    grid_major: bool = False
    scan_unroll: int = 1
    cpu_compiler_options: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.grid_major, (bool, np.bool_)):
            raise ValueError(
                f"ExecutionHints.grid_major must be a bool; got {self.grid_major!r}")
        unroll = self.scan_unroll
        if isinstance(unroll, (bool, np.bool_)) or not isinstance(unroll, (int, np.integer)) \
                or unroll < 1:
            raise ValueError(f"ExecutionHints.scan_unroll must be an integer >= 1; got {unroll!r}")
        options = self.cpu_compiler_options
        if isinstance(options, (str, bytes)) or not isinstance(options, (tuple, list)):
            raise ValueError("ExecutionHints.cpu_compiler_options must be a tuple of (name, value) "
                             f"pairs; got {options!r}")
        pairs = []
        for pair in options:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2 \
                    or not isinstance(pair[0], str):
                raise ValueError("ExecutionHints.cpu_compiler_options must be a tuple of "
                                 f"(name, value) pairs with a str name; got {pair!r}")
            pairs.append((pair[0], pair[1]))
        object.__setattr__(self, "grid_major", bool(self.grid_major))
        object.__setattr__(self, "scan_unroll", int(unroll))
        object.__setattr__(self, "cpu_compiler_options", tuple(pairs))


#: The engine's defaults: one ``vmap`` over the runs, one step per loop trip, XLA's options.
DEFAULT_HINTS = ExecutionHints()


def hints_or_default(hints: Any) -> ExecutionHints:
    """``hints``, or :data:`DEFAULT_HINTS` for ``None``; ``TypeError`` for anything else."""
    if hints is None:
        return DEFAULT_HINTS
    if not isinstance(hints, ExecutionHints):
        raise TypeError(
            f"hints must be an ldpjax.engine.ExecutionHints or None, got {type(hints).__name__}")
    return hints


__all__ = ["DEFAULT_HINTS", "ExecutionHints", "hints_or_default"]
