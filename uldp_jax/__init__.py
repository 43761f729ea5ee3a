"""uldp_jax: utility-optimized and context-aware local differential privacy in JAX."""

import typing as _typing

from uldp_jax import estimation, mechanisms, metrics, privacy
from uldp_jax._api import aggregate, estimate, estimate_from_stats, perturb
from uldp_jax.mechanisms.core._compact import CompactBits, to_compact, to_dense
from uldp_jax.mechanisms.core._registry import constructors as _constructors
from uldp_jax.mechanisms import Mechanism, PrivacySpec, replace, static_field
from uldp_jax.privacy import Tradeoff, privacy_tradeoff, tradeoff_curve
from uldp_jax.privacy import AuditReport, Channel, audit, bsldp_matrix, channel, hlldp_matrix, ldp_matrix
from uldp_jax.pum import PUMEstimate, audit_pum, pum_estimate, pum_loss, pum_truth, simulate_pum
from uldp_jax import pum
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

from uldp_jax._version import __version__  # noqa: E402
from uldp_jax._cache import cache_dir as compilation_cache_dir
from uldp_jax._cache import configure_from_env as _configure_cache
from uldp_jax._cache import disable_compilation_cache, enable_compilation_cache

_configure_cache()  # JAX's persistent compilation cache, on by default (ULDP_JAX_CACHE=0: off; see uldp_jax._cache)

# The mechanisms are not listed here: every constructor the registry holds (each family's __init__ and uldp_jax.pum
# register theirs; mechanisms/core/_registry.py) is bound here and added to __all__: ul.GRR, ul.OUE, ul.glutf, ul.PUM...
globals().update(_constructors())

if _typing.TYPE_CHECKING:  # what type checkers and IDEs see of those names: each family re-exports its registered
    # constructors (``from ._grr import GRR as GRR``, the line its ``register`` needs); a new family adds its line here
    # and in uldp_jax/mechanisms/__init__.py (tests/mechanisms/core/test_registry.py checks both against the registry).
    from uldp_jax.mechanisms.binary import *  # noqa: F403
    from uldp_jax.mechanisms.hadamard import *  # noqa: F403
    from uldp_jax.mechanisms.hashing import *  # noqa: F403
    from uldp_jax.mechanisms.rr import *  # noqa: F403
    from uldp_jax.mechanisms.subset import *  # noqa: F403
    from uldp_jax.mechanisms.transform import *  # noqa: F403
    from uldp_jax.mechanisms.unary import *  # noqa: F403
    from uldp_jax.mechanisms.wheel import *  # noqa: F403
    from uldp_jax.pum import *  # noqa: F403

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
    "mechanisms",
    "metrics",
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
