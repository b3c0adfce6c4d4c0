"""A toy algorithm for the engine: a privately released counter (Gaussian mechanism).

Example:
  >>> import jax
  >>> from ldpjax.demo import counter_params, noisy_counter
  >>> from ldpjax.engine import rollout
  >>> _, rec = rollout(noisy_counter(), counter_params(1.0), jax.random.key(0), 8)
  >>> rec.error.shape
  ()
"""

from ldpjax.demo.noisy_counter import CounterOutputs
from ldpjax.demo.noisy_counter import CounterParams
from ldpjax.demo.noisy_counter import CounterState
from ldpjax.demo.noisy_counter import counter_event
from ldpjax.demo.noisy_counter import counter_params
from ldpjax.demo.noisy_counter import noisy_counter
from ldpjax.demo.noisy_counter import validate_counter_params

__all__ = [
    "CounterOutputs",
    "CounterParams",
    "CounterState",
    "counter_event",
    "counter_params",
    "noisy_counter",
    "validate_counter_params",
]
