"""Prediction with expert advice under local differential privacy (paper 000).

Public names are re-exported here, one per line (optax style); each algorithm lives in its
own module.
"""

# --- shared (foundation)
from ldpjax.experts.gains import validate_gains
from ldpjax.experts.privacy import noise_scale
from ldpjax.experts.privacy import privatize_gains

# --- part A (RW-FTPL, RW-AdaBatch, amplification)

# --- part B (RW-Meta, learners, baselines, COVID task)
