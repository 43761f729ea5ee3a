"""Tuning: optax gradient tuning on closed forms, collaborative sampling (003 §5, §6.3), mechanism recommendation."""

from uldp_jax.tuning._collab import CollabResult, collaborative_simulate
from uldp_jax.tuning._optimize import (
    DEFAULT_STEPS,
    OBJECTIVES,
    Domain,
    GradientTuner,
    TuneInfo,
    TuneState,
    default_optimizer,
    gradient_tuner,
    minimize,
    optimize,
    run_tuner,
    solve,
)
from uldp_jax.tuning._recommend import Recommendation, format_recommendations, recommend
from uldp_jax.tuning._tune import TuneResult, tune

__all__ = [
    "DEFAULT_STEPS",
    "OBJECTIVES",
    "CollabResult",
    "Domain",
    "GradientTuner",
    "Recommendation",
    "TuneInfo",
    "TuneResult",
    "TuneState",
    "collaborative_simulate",
    "default_optimizer",
    "format_recommendations",
    "gradient_tuner",
    "minimize",
    "optimize",
    "recommend",
    "run_tuner",
    "solve",
    "tune",
]
