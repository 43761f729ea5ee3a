"""US Census 1990 categories (001 §6.1, 003 §6.1): the category layout, the sensitive rule and a proxy.

Attributes and codes follow the UCI "US Census Data (1990)" file ``USCensus1990.data.txt``:
``dAge`` (8 codes; 0 = under 13, 1 = 13-19, 2 = 20-29, 3 = 30-39, 4 = 40-49, 5 = 50-64, 6 = 65-79, 7 = 80+),
``dIncome1`` (5 codes; 0 = no income, used for "unemployment"), ``iMarital`` (5 codes; 2 = divorced),
``iSex`` (2), ``iDisabl1`` (3 codes; 1 = disabled, 003 only) and the five military-period flags of 001 Fig 7
(``iSept80``, ``iMay75880``, ``iVietnam``, ``iFeb55``, ``iKorean``; 2 codes each, non-sensitive).

001's sensitive rule (|X_S| = 76 of 400): divorced for ages 20+ (codes 2-7; 60 categories) or no income for
ages 30-49 (codes 3-4, excluding students and retirees; 16 more), the exact code lists being unpublished; this
rule reproduces the published count. 003's rule adds disability and reaches its s = 424 of 1200 by a documented
seeded top-up (its exact rule is not published either).
"""

from __future__ import annotations

import numpy as np

from uldp_jax.data._dataset import Dataset, rescale_sensitive_mass

BASE_ATTRIBUTES = ("dAge", "dIncome1", "iMarital", "iSex")
BASE_CARDINALITIES = (8, 5, 5, 2)
MILITARY_ATTRIBUTES = ("iSept80", "iMay75880", "iVietnam", "iFeb55", "iKorean")
DISABILITY_ATTRIBUTE = "iDisabl1"
DIVORCED, NO_INCOME, DISABLED = 2, 0, 1
DIVORCE_AGES = (2, 3, 4, 5, 6, 7)
UNEMPLOYMENT_AGES = (3, 4)

# Approximate 1990 PUMS marginals used by the proxy (documented assumptions, not fitted to the real file).
_AGE = np.array([0.18, 0.10, 0.16, 0.17, 0.13, 0.12, 0.10, 0.04])
_INCOME_ADULT = np.array([0.25, 0.35, 0.25, 0.10, 0.05])
_MARITAL_ADULT = np.array([0.58, 0.07, 0.09, 0.03, 0.23])
_MARITAL_TEEN = np.array([0.03, 0.0, 0.005, 0.005, 0.96])
_SEX = np.array([0.49, 0.51])
_MILITARY_YES = np.array([0.02, 0.03, 0.04, 0.02, 0.02])
_DISABILITY_ADULT = np.array([0.0, 0.12, 0.88])


def base_sensitive_mask() -> np.ndarray:
    """``bool[8, 5, 5, 2]``: 001's sensitive categories (76 of 400)."""
    age = np.arange(8)[:, None, None, None]
    inc = np.arange(5)[None, :, None, None]
    mar = np.arange(5)[None, None, :, None]
    divorced = (mar == DIVORCED) & np.isin(age, DIVORCE_AGES)
    jobless = (inc == NO_INCOME) & np.isin(age, UNEMPLOYMENT_AGES)
    return np.broadcast_to(divorced | jobless, BASE_CARDINALITIES).copy()


def census_sensitive(num_military: int = 0) -> np.ndarray:
    """Sensitive item indices of 001's layout with ``num_military`` extra binary attributes (Fig 7)."""
    mask = base_sensitive_mask()
    mask = np.broadcast_to(mask.reshape(mask.shape + (1,) * num_military), mask.shape + (2,) * num_military)
    return np.flatnonzero(mask)


def _base_joint() -> np.ndarray:
    """``float[8, 5, 5, 2]``: age x income x marital x sex; children have no income and are never married."""
    inc = np.tile(_INCOME_ADULT, (8, 1))
    inc[0] = [1, 0, 0, 0, 0]
    mar = np.tile(_MARITAL_ADULT, (8, 1))
    mar[0] = [0, 0, 0, 0, 1]
    mar[1] = _MARITAL_TEEN
    mar[6] = [0.55, 0.30, 0.07, 0.02, 0.06]
    mar[7] = [0.30, 0.62, 0.04, 0.01, 0.03]
    return _AGE[:, None, None, None] * inc[:, :, None, None] * mar[:, None, :, None] * _SEX[None, None, None, :]


def census_proxy(num_military: int = 0, n: int = 1_229_143) -> Dataset:
    """Synthetic proxy of 001's US Census data: d = 400 * 2**num_military, |X_S| = 76 * 2**num_military.

    Product of marginals (age x income|age x marital|age x sex x military flags), with children forced to no
    income / never married, so some categories have zero mass as in the real data. Deterministic (no seed).

    Args:
      num_military: number of military-period attributes appended (0..5; 001 Fig 7 uses 0..5 -> 4..9
        attributes).
      n: number of users (001: 1,229,143 = half the people; Fig 7: 240,000).
    """
    if not 0 <= num_military <= 5:
        raise ValueError(f"Expected num_military={num_military} in [0, 5].")
    p = _base_joint()
    for j in range(num_military):
        yes = _MILITARY_YES[j]
        p = p[..., None] * np.array([1 - yes, yes])
    shape = BASE_CARDINALITIES + (2,) * num_military
    names = BASE_ATTRIBUTES + MILITARY_ATTRIBUTES[:num_military]
    desc = (f"Synthetic product-of-marginals census over {', '.join(names)} (d={p.size}); sensitive = "
            "divorced (ages 20+) or no income (ages 30-49).")
    return Dataset("census" if num_military == 0 else f"census{4 + num_military}", p.ravel(),
                   tuple(census_sensitive(num_military).tolist()), n, shape, "synthetic", desc,
                   extra={"attributes": names})


def census003_sensitive(seed: int = 0, s: int = 424) -> np.ndarray:
    """003's sensitive set over age x income x marital x sex x disability (d = 1200): 001's rule for every
    disability code, plus "disabled" for ages 50+, topped up (seeded) with disabled adults to reach ``s``."""
    base = base_sensitive_mask()[..., None]
    age = np.arange(8)[:, None, None, None, None]
    dis = np.arange(3)[None, None, None, None, :]
    rule = np.broadcast_to(base, BASE_CARDINALITIES + (3,)) | ((dis == DISABLED) & (age >= 5))
    sens = np.flatnonzero(rule)
    pool = np.flatnonzero(~rule & (dis == DISABLED) & (age >= 1))
    rng = np.random.default_rng(seed)
    if s < sens.size:
        raise ValueError(f"Expected s={s} >= {sens.size} (the size of 003's rule).")
    extra = rng.choice(pool, size=s - sens.size, replace=False)
    return np.sort(np.concatenate([sens, extra]))


def census003_proxy(seed: int = 0, theta_n: float = 0.56, n: int = 2_458_285) -> Dataset:
    """003's Census setting: age x income x marital x sex x disability (d = 1200, s = 424, theta_N = 0.56)."""
    dis = np.tile(_DISABILITY_ADULT, (8, 1))
    dis[0] = [1, 0, 0]
    p = _base_joint()[..., None] * dis[:, None, None, None, :]
    sens = census003_sensitive(seed)
    p = rescale_sensitive_mass(p.ravel(), sens, 1.0 - theta_n)
    desc = ("Synthetic census over age, income, marital, sex, disability (d=1200); 424 sensitive categories "
            f"(divorce/no income/disability rule plus seeded top-up), theta_N={theta_n}.")
    return Dataset("census1200", p, tuple(sens.tolist()), n, BASE_CARDINALITIES + (3,), "synthetic", desc,
                   extra={"attributes": BASE_ATTRIBUTES + (DISABILITY_ATTRIBUTE,)})
