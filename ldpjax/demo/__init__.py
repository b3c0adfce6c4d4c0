"""A toy algorithm for the engine: a privately released counter (Gaussian mechanism)."""

from ldpjax.demo.noisy_counter import CounterParams
from ldpjax.demo.noisy_counter import CounterState
from ldpjax.demo.noisy_counter import noisy_counter

__all__ = ["CounterParams", "CounterState", "noisy_counter"]
