"""The shared engine: one way to run every ldpjax algorithm (scan x vmap x shard x chunk)."""

from ldpjax.engine import record
from ldpjax.engine.base import Algorithm
from ldpjax.engine.base import InitFn
from ldpjax.engine.base import StepFn
from ldpjax.engine.compile import ELEMENTAL_EMITTERS
from ldpjax.engine.compile import enable_compile_cache
from ldpjax.engine.hints import ExecutionHints
from ldpjax.engine.grid import product_grid
from ldpjax.engine.keys import make_key
from ldpjax.engine.keys import seed_keys
from ldpjax.engine.plan import ChunkPlan
from ldpjax.engine.plan import plan_chunks
from ldpjax.engine.record import Recorder
from ldpjax.engine.release import release_run
from ldpjax.engine.rollout import rollout
from ldpjax.engine.runner import ChunkOutcome
from ldpjax.engine.runner import ChunkRunner
from ldpjax.engine.runner import ChunkWork
from ldpjax.engine.runner import in_process
from ldpjax.engine.simulate import SimulationInfo
from ldpjax.engine.simulate import SimulationResult
from ldpjax.engine.simulate import simulate

__all__ = [
    "ELEMENTAL_EMITTERS",
    "Algorithm",
    "ChunkOutcome",
    "ChunkPlan",
    "ChunkRunner",
    "ChunkWork",
    "ExecutionHints",
    "InitFn",
    "Recorder",
    "SimulationInfo",
    "SimulationResult",
    "StepFn",
    "enable_compile_cache",
    "in_process",
    "make_key",
    "plan_chunks",
    "product_grid",
    "record",
    "release_run",
    "rollout",
    "seed_keys",
    "simulate",
]
