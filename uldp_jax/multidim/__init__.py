"""Multidimensional collection (issue 52): a user holds one value per attribute of a product domain.

``SPL`` (split the budget), ``SMP`` (sample one attribute) and ``RSFD`` (random sampling plus fake data, Arcolezi et
al. 2021), each a ``ul.Mechanism`` over the flat product domain (``encode``/``decode``), with exact channels for
small products; ``marginals`` gives each attribute's estimate, ``marginal_variance`` its closed-form variance, and
``audit_attributes`` certifies the attribute-wise guarantee of utility-optimized SPL/SMP. See docs/multidim.md.
"""

from uldp_jax.multidim._audit import AttributeAudit, audit_attributes
from uldp_jax.multidim._marginals import marginal_variance, marginals, marginals_of
from uldp_jax.multidim._product import decode, encode
from uldp_jax.multidim._spl import SPL, spl
from uldp_jax.multidim._smp import SMP, smp
from uldp_jax.multidim._rsfd import RSFD, amplified_eps, rsfd

__all__ = [
    "RSFD", "SMP", "SPL", "AttributeAudit", "amplified_eps", "audit_attributes", "decode", "encode",
    "marginal_variance", "marginals", "marginals_of", "rsfd", "smp", "spl",
]
