"""The public names of ``uldp_jax``, loaded on the first use of one (``uldp_jax/__init__.py``, PEP 562).

``import uldp_jax`` itself loads nothing heavy, so that ``uldp --help`` and ``uldp --version`` start without JAX; the
first ``ul.<name>`` imports this module, which imports the package's layers, turns on JAX's persistent compilation
cache and binds every registered constructor.
"""

from uldp_jax import estimation, mechanisms, metrics, privacy
from uldp_jax._api import aggregate, estimate, estimate_from_stats, perturb
from uldp_jax.mechanisms.core._compact import CompactBits, to_compact, to_dense
from uldp_jax.mechanisms.core._registry import constructors as _constructors
from uldp_jax.mechanisms import Mechanism, PrivacySpec, replace, static_field
from uldp_jax.privacy import Tradeoff, privacy_tradeoff, tradeoff_curve
from uldp_jax.privacy import AuditReport, Channel, audit, bsldp_matrix, channel, hlldp_matrix, ldp_matrix
from uldp_jax.pum import PUMEstimate, audit_pum, pum_estimate, pum_loss, pum_truth, simulate_pum
from uldp_jax import longitudinal, multidim, pum
from uldp_jax import testing, theory, tuning
from uldp_jax.studies import StudyResult, study
from uldp_jax.tuning import recommend, tune
from uldp_jax._check import CheckReport, check
from uldp_jax._audit_sampler import audit_sampler
from uldp_jax.privacy._sampler_report import SamplerAudit

# The engine package is ``uldp_jax.engine``; ``ul.simulate`` is its function.
from uldp_jax.engine import _counts_path as fastpath
from uldp_jax.engine import SimResult, simulate, simulate_stats
from uldp_jax._io import load_result, save_result

from uldp_jax._version import __version__
from uldp_jax._cache import cache_dir as compilation_cache_dir
from uldp_jax._cache import configure_from_env as _configure_cache
from uldp_jax._cache import disable_compilation_cache, enable_compilation_cache

_configure_cache()  # JAX's persistent compilation cache, on by default (ULDP_JAX_CACHE=0: off; see uldp_jax._cache)

# The mechanisms are not listed here: every constructor the registry holds (each family's __init__ and uldp_jax.pum
# register theirs; mechanisms/core/_registry.py) is bound here and added to __all__: ul.GRR, ul.OUE, ul.glutf, ul.PUM...
# (type checkers see them through uldp_jax/__init__.py's TYPE_CHECKING block)
globals().update(_constructors())

__all__ = [
    "AuditReport",
    "Channel",
    "CheckReport",
    "CompactBits",
    "Mechanism",
    "PUMEstimate",
    "PrivacySpec",
    "SamplerAudit",
    "SimResult",
    "StudyResult",
    "Tradeoff",
    "aggregate",
    "audit",
    "audit_pum",
    "audit_sampler",
    "bsldp_matrix",
    "channel",
    "check",
    "compilation_cache_dir",
    "disable_compilation_cache",
    "enable_compilation_cache",
    "estimate",
    "estimate_from_stats",
    "estimation",
    "fastpath",
    "hlldp_matrix",
    "ldp_matrix",
    "load_result",
    "longitudinal",
    "mechanisms",
    "metrics",
    "multidim",
    "perturb",
    "privacy",
    "privacy_tradeoff",
    "pum",
    "pum_estimate",
    "pum_loss",
    "pum_truth",
    "recommend",
    "save_result",
    "replace",
    "simulate",
    "simulate_pum",
    "simulate_stats",
    "static_field",
    "study",
    "testing",
    "theory",
    "tradeoff_curve",
    "to_compact",
    "to_dense",
    "tune",
    "tuning",
]
__all__ += sorted(_constructors())
