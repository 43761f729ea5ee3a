"""Reproductions of the papers' figures and tables, runnable from Python or the ``uldp`` CLI."""

from uldp_jax.experiments import _audit_peers, _context, _extras, _field_table, _glutf, _glutf_sim, _hr_general, _murakami, _murakami_timing, _pum, _tuning  # noqa: F401
from uldp_jax.experiments._common import error_curve, make_grid, make_mechanism, mechanism_names, nonprivate_error
from uldp_jax.experiments._runner import (
    Context,
    Experiment,
    Report,
    UsageError,
    experiment_names,
    get_experiment,
    make_config,
    register,
    run_experiment,
)

__all__ = [
    "Context",
    "Experiment",
    "Report",
    "UsageError",
    "error_curve",
    "experiment_names",
    "get_experiment",
    "make_config",
    "make_grid",
    "make_mechanism",
    "mechanism_names",
    "nonprivate_error",
    "register",
    "run_experiment",
]
