"""Local hashing: OLH and uLH (003); Apple's count mean sketches CMS and HCMS (Apple 2017)."""

from uldp_jax.mechanisms.hashing._olh import OLH as OLH, HashReport
from uldp_jax.mechanisms.hashing._ulh import ULH as ULH
from uldp_jax.mechanisms.hashing._cms import CMS as CMS, CMSReport
from uldp_jax.mechanisms.hashing._hcms import HCMS as HCMS
from uldp_jax.mechanisms.hashing._sketch_forms import cms_item_mse, hcms_item_mse  # ul.theory's
from uldp_jax.mechanisms.core._registry import register

register(OLH, lambda e: OLH(4, e, g=3, family="full"))
register(ULH, lambda e: ULH(5, (0, 2, 3), e, g=3, family="full"))
register(CMS, lambda e: CMS(5, e, k=3, m=4))
register(HCMS, lambda e: HCMS(5, e, k=3, m=4))

# the registered constructors (what ``from ... import *`` and type checkers see)
__all__ = ["CMS", "HCMS", "OLH", "ULH"]
