"""Tuning: optax gradient tuning on closed forms, collaborative sampling (003 §5, §6.3), mechanism recommendation."""

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
from uldp_jax.tuning._tune import TuneResult, tune
from uldp_jax.tuning._collab import CollabResult, collaborative_simulate
from uldp_jax.tuning._recommend import Recommendation, format_recommendations, recommend
