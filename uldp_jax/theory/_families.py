"""Which closed form belongs to which mechanism: the mechanism says so itself (``mech.closed_form()``).

A ``Family`` (defined in the leaf module ``mechanisms/core/_family.py``) names the tunable parameter, its
closed-form risk ``risk(eps, s, theta_n, param)`` (n * fixed-model MSE), the pure probabilities
``probs(eps, s, param) -> (p*, q*, z*)`` (003 Def 6), the parameter's domain and its closed-form optimum. LDP
families use ``s = d`` and ``theta_n = 0``. Nothing here is keyed by class name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from uldp_jax.mechanisms.core import _base, _spec
from uldp_jax.mechanisms.core._family import Family  # noqa: F401  (re-exported)


def uses_generic(mech: Any, fam: Family) -> bool:
    """True when the closed form must come from the instance's own (p*, q*, z*) (003 eq 28)."""
    return fam.generic


def generic_probs(mech: Any) -> tuple[Any, Any, Any]:
    """``(p*, q*, z*)`` of a pure ULDP instance from its own parameters (003 Theorem 5), as JAX values."""
    pure = mech.pure()
    return pure.p, pure.q, pure.z


def family_of(mech: _base.Mechanism) -> Family:
    """The closed-form ``Family`` of a mechanism instance (``mech.closed_form()``).

    Raises:
      TypeError: if ``mech`` is not a mechanism or has no closed form.
    """
    fam = mech.closed_form() if isinstance(mech, _base.Mechanism) else None
    if fam is None:
        raise TypeError(f"Expected mech to be a mechanism with a closed form (closed_form() is not None), "
                        f"got {type(mech).__name__}.")
    return fam


def sizes(mech: Any, fam: Family) -> tuple[int, np.ndarray]:
    """``(s, sensitive mask bool[d])``: ``s = d`` and an all-True mask for LDP families."""
    if fam.ldp:
        return int(mech.d), np.ones(mech.d, dtype=bool)
    return len(mech.sensitive), _spec.sensitive_mask(mech.d, mech.sensitive)


def param_value(mech: Any, fam: Family) -> Any:
    """The current value of the family's parameter (``None`` when it has none)."""
    if fam.param is None:
        return None
    value = getattr(mech, fam.param)
    return value if not fam.integer else int(value)
