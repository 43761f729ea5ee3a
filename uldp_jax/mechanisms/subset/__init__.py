"""Subset selection and other block designs: SS and uSS (003), uBD (Yoon et al. 2025), PGR and HPGR (Feldman et al. 2022),
RWS (Fang et al. 2025)."""

from uldp_jax.mechanisms.subset._ss import SS as SS
from uldp_jax.mechanisms.subset._uss import USS as USS
from uldp_jax.mechanisms.subset._ubd import UBD as UBD
from uldp_jax.mechanisms.subset._pgr import PGR as PGR
from uldp_jax.mechanisms.subset._hpgr import HPGR as HPGR
from uldp_jax.mechanisms.subset._rws import RWS as RWS
from uldp_jax.mechanisms.core._registry import register

register(SS, lambda e: SS(5, e, k=2))
register(USS, lambda e: USS(5, (0, 2, 3), e, k=2))
register(UBD, lambda e: UBD(6, (0, 2, 3), e, sizes=(1, 2), weights=(0.7, 0.3), alpha=0.4))
register(PGR, lambda e: PGR(6, e, q=2))
register(HPGR, lambda e: HPGR(6, e, h=2, q=2))
register(RWS, lambda e: RWS(6, e, k=2, family="full"))

__all__ = [
    "SS", "USS", "UBD", "PGR", "HPGR", "RWS",
]
