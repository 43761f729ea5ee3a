"""Mechanisms: each a pytree with a per-user sampler, an aggregate, and an exact channel.

``core/`` holds the protocol and shared helpers; each other subpackage is one family. The mechanisms themselves
are not listed here: each family's ``__init__`` registers its constructors (``core/_registry.py``), and this module
exports every registered one, so a new mechanism in a family needs no line here.

The records a mechanism author builds are public here (docs/own_mechanism.md): ``Estimator`` (``estimator()``:
the linear estimator's affine form, variance or own ``debias``), ``Reports`` (``reports()``: the statistic's length,
the report check, the bits sent, a statistic sampler), ``Counts`` (``counts()``: exact count-level samplers; build it
with ``counts_record``), ``Likelihood`` (``likelihood()``: the forms EM runs on), ``Family`` (``closed_form()``:
closed forms for ``ul.theory`` and ``ul.tune``), ``Compact`` (``compact()``: compact bit-vector reports; build the
independent-bits one with ``independent_bits``) and ``Pure`` (``pure()``: a pure mechanism's probabilities).
"""

import typing as _typing

from uldp_jax.mechanisms.core._base import Mechanism
from uldp_jax.mechanisms.core._pytree import pytree_dataclass, replace, static_field
from uldp_jax.mechanisms.core._spec import PrivacySpec
from uldp_jax.mechanisms.core._family import Family
from uldp_jax.mechanisms.core._records import (Compact, Counts, Estimator, Likelihood, Pure, Reports, counts_record,
                                              independent_bits)
from uldp_jax.mechanisms.core._registry import constructors, examples
from uldp_jax.mechanisms import binary, hadamard, hashing, rr, subset, transform, unary, wheel  # noqa: F401
from uldp_jax.mechanisms.hashing import CMSReport, HashReport
from uldp_jax.mechanisms.transform import GLUTFReport
from uldp_jax.mechanisms.wheel import WheelReport

# The families above registered their constructors on import: GRR, UE, OUE, glutf, HR, ... (``constructors()``).
globals().update(constructors())

if _typing.TYPE_CHECKING:  # what type checkers and IDEs see of those exports: each family re-exports its registered
    # constructors (``from ._grr import GRR as GRR``, the line its ``register`` needs); a new family adds its line here
    # and in uldp_jax/__init__.py (tests/mechanisms/core/test_registry.py checks both against the registry).
    from uldp_jax.mechanisms.binary import *  # noqa: F403
    from uldp_jax.mechanisms.hadamard import *  # noqa: F403
    from uldp_jax.mechanisms.hashing import *  # noqa: F403
    from uldp_jax.mechanisms.rr import *  # noqa: F403
    from uldp_jax.mechanisms.subset import *  # noqa: F403
    from uldp_jax.mechanisms.transform import *  # noqa: F403
    from uldp_jax.mechanisms.unary import *  # noqa: F403
    from uldp_jax.mechanisms.wheel import *  # noqa: F403

__all__ = [
    "CMSReport", "Compact", "Counts", "Estimator", "Family", "GLUTFReport", "HashReport", "Likelihood", "Mechanism",
    "PrivacySpec", "Pure", "Reports", "WheelReport", "constructors", "counts_record", "examples", "independent_bits",
    "pytree_dataclass", "replace", "static_field",
]
__all__ += sorted(constructors())
