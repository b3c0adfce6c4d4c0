"""ldpjax: batched JAX learning under local differential privacy."""

__version__ = "0.1.0"

