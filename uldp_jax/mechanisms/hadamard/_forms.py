r"""Exact risks and sample complexity of the Hadamard-response family (HR, high-low HR, block HR; 004 §5-6).

Risks are :math:`n\,E\,\ell_2^2` of the unbiased estimators (``HR.decode``, 004 eqs 15-16 and 19), exact, from
docs/errata.md#004-exact-risks-of-the-hadamard-mechanisms, with :math:`R = (e^\varepsilon + 1)/(e^\varepsilon - 1) = 1/\tanh(\varepsilon/2)`:

* HR over ``d`` items: :math:`R^2 d - \sum_x p_x^2`;
* high-low HR: :math:`s R (2 + (e^\varepsilon - 1) p(A)) / (e^\varepsilon - 1) + R (1 - p(A)) - \sum_x p_x^2`;
* block HR: :math:`R^2 \sum_j k_j\, p(\mathcal X_j) - \sum_x p_x^2`.

Each estimate is :math:`R\,\bar Z` with per-user :math:`Z \in \{-1, 0, 1\}`, so per item
:math:`n \mathrm{Var}(\hat p_x) = R^2 E[Z^2] - p_x^2` (iid model), with :math:`E[Z^2]` the probability that the
report lands in the item's Hadamard block: 1 for HR, :math:`p([S])` for sensitive items of high-low HR,
:math:`p(\mathcal X_j)` for block HR. Hence in the block formula :math:`k_j = |\mathcal X_j|` is the number of
*items* of block ``j`` (the sum runs over the block's items), not its Hadamard size :math:`K_j` (checked against
exact channel moments in ``tests/mechanisms/hadamard``). For non-sensitive items of high-low HR,
:math:`n\mathrm{Var} = R p_x - p_x^2`.

Variance models (docs/errata.md#variance-models): ``model="iid"`` (the formulas above) or ``"fixed"`` (subtract ``1 - sum p^2``).

Sample complexity (004 Theorems 3-4): ``*_users_for_tv`` give a *sufficient* number of users for
``E[d_TV] <= alpha``, from :math:`E|\hat p_x - p_x| \le \sigma_x` (Jensen), i.e.
:math:`n \ge (\sum_x \sqrt{n\mathrm{Var}(\hat p_x)} / (2\alpha))^2` for a given ``p``; without ``p`` the bound holds for
every distribution (minimax): :math:`(R d/(2\alpha))^2` for HR, :math:`((sR + \sqrt{R(d-s)})/(2\alpha))^2` for high-low
HR and :math:`R^2 \sum_j k_j^2 / (4\alpha^2)` for block HR, matching the orders
:math:`s^2/(\alpha^2\varepsilon^2) + d/(\alpha^2\varepsilon)` (Thm 3) and
:math:`\sum_j k_j^2/(\alpha^2\varepsilon^2)` (Thm 4) since :math:`R \approx 2/\varepsilon` for small eps.
All functions are ``jax.numpy`` expressions, differentiable in ``eps`` and ``p``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.hadamard._partition import check_partition

MODELS = ("iid", "fixed")


def _R(eps: Any) -> Any:
    return 1.0 / jnp.tanh(jnp.asarray(eps) / 2.0)


def _check_model(model: Any) -> None:
    if model not in MODELS:
        raise ValueError(f"Expected model={model!r} in {MODELS}.")


def _check_alpha(alpha: Any) -> None:
    if _validate.is_concrete(alpha) and not np.all(np.asarray(alpha, np.float64) > 0):
        raise ValueError(f"Expected alpha={alpha!r} > 0.")


def _finish(nvar: Any, p: Any, model: str) -> Any:
    _check_model(model)
    risk = jnp.sum(nvar, axis=-1)
    return risk if model == "iid" else risk - (1.0 - jnp.sum(p**2, axis=-1))


def _block_labels(blocks: Any) -> tuple[np.ndarray, np.ndarray]:
    blocks, d = check_partition(blocks)
    label = np.empty(d, dtype=np.int32)
    for j, b in enumerate(blocks):
        label[list(b)] = j
    return label, np.array([len(b) for b in blocks], dtype=np.int64)


def hr_item_nvar(eps: Any, p: Any) -> Any:
    r"""Per-item :math:`n\mathrm{Var}(\hat p_x) = R^2 - p_x^2` of HR (iid model); ``p: float[d]``."""
    p = jnp.asarray(p)
    return _R(eps) ** 2 - p**2


def highlow_hr_item_nvar(eps: Any, p: Any, sensitive: Sequence[int]) -> Any:
    r"""Per-item :math:`n\mathrm{Var}` of high-low HR (iid): :math:`R^2 p([S]) - p_x^2` on A, :math:`R p_x - p_x^2` on B."""
    p = jnp.asarray(p)
    sens = np.zeros(p.shape[-1], dtype=bool)
    sens[list(_validate.check_index_set("sensitive", sensitive, p.shape[-1]))] = True
    sens = jnp.asarray(sens)
    R = _R(eps)
    p_a = jnp.sum(jnp.where(sens, p, 0.0), axis=-1, keepdims=True)
    p_hadamard = (1.0 - 1.0 / R) + p_a / R  # p([S]) = 2/(e+1) + (e-1)/(e+1) p(A)
    return jnp.where(sens, R**2 * p_hadamard, R * p) - p**2


def block_hr_item_nvar(eps: Any, p: Any, blocks: Any) -> Any:
    r"""Per-item :math:`n\mathrm{Var}(\hat p_x) = R^2 p(\mathcal X_j) - p_x^2` of block HR (iid model)."""
    p = jnp.asarray(p)
    label, _ = _block_labels(blocks)
    if label.shape[0] != p.shape[-1]:
        raise ValueError(f"Expected p of length {label.shape[0]} (the blocks' domain), got {p.shape[-1]}.")
    onehot = jnp.asarray(label[:, None] == np.arange(label.max() + 1)[None, :], p.dtype)  # [d, m]
    p_block = (p @ onehot) @ onehot.T
    return _R(eps) ** 2 * p_block - p**2


def hr_l2_risk(eps: Any, p: Any, model: str = "iid") -> Any:
    r""":math:`n E\ell_2^2` of HR: :math:`R^2 d - \sum p^2` (iid)."""
    return _finish(hr_item_nvar(eps, p), jnp.asarray(p), model)


def highlow_hr_l2_risk(eps: Any, p: Any, sensitive: Sequence[int], model: str = "iid") -> Any:
    r""":math:`n E\ell_2^2` of high-low HR: :math:`sR(2 + (e-1)p(A))/(e-1) + R(1 - p(A)) - \sum p^2` (iid)."""
    return _finish(highlow_hr_item_nvar(eps, p, sensitive), jnp.asarray(p), model)


def block_hr_l2_risk(eps: Any, p: Any, blocks: Any, model: str = "iid") -> Any:
    r""":math:`n E\ell_2^2` of block HR: :math:`R^2 \sum_j k_j p(\mathcal X_j) - \sum p^2` (iid), ``k_j = |X_j|``."""
    return _finish(block_hr_item_nvar(eps, p, blocks), jnp.asarray(p), model)


def users_for_tv(item_nvar: Any, alpha: Any) -> Any:
    r"""Sufficient users for :math:`E[d_{TV}] \le \alpha`: :math:`(\sum_x \sqrt{n\mathrm{Var}_x} / (2\alpha))^2`."""
    _check_alpha(alpha)
    return (jnp.sum(jnp.sqrt(jnp.maximum(item_nvar, 0.0)), axis=-1) / (2.0 * jnp.asarray(alpha))) ** 2


def hr_users_for_tv(alpha: Any, eps: Any, d: int, p: Any = None) -> Any:
    """Users sufficient for ``E[d_TV] <= alpha`` with HR; for every ``p`` when ``p`` is None: ``(R d / 2 alpha)^2``."""
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    if p is None:
        return users_for_tv(jnp.full((d,), _R(eps) ** 2), alpha)
    return users_for_tv(hr_item_nvar(eps, p), alpha)


def highlow_hr_users_for_tv(alpha: Any, eps: Any, d: int, sensitive: Sequence[int], p: Any = None) -> Any:
    """Users sufficient for ``E[d_TV] <= alpha`` with high-low HR (004 Thm 3 upper bound, explicit constants)."""
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    s = len(_validate.check_index_set("sensitive", sensitive, d))
    if p is None:
        _check_alpha(alpha)
        R = _R(eps)
        return ((s * R + jnp.sqrt(R * (d - s))) / (2.0 * jnp.asarray(alpha))) ** 2
    return users_for_tv(highlow_hr_item_nvar(eps, p, sensitive), alpha)


def block_hr_users_for_tv(alpha: Any, eps: Any, blocks: Any, p: Any = None) -> Any:
    """Users sufficient for ``E[d_TV] <= alpha`` with block HR (004 Thm 4 upper bound): ``R^2 sum k_j^2 / 4 alpha^2``."""
    if p is None:
        _check_alpha(alpha)
        _, sizes = _block_labels(blocks)
        return _R(eps) ** 2 * float(np.sum(sizes.astype(np.float64) ** 2)) / (4.0 * jnp.asarray(alpha) ** 2)
    return users_for_tv(block_hr_item_nvar(eps, p, blocks), alpha)


def theorem3_rate(alpha: Any, eps: Any, d: int, s: int) -> Any:
    r"""Order of 004 Thm 3 without constants: :math:`s^2/(\alpha^2\varepsilon^2) + d/(\alpha^2\varepsilon)`."""
    _check_alpha(alpha)
    alpha, eps = jnp.asarray(alpha), jnp.asarray(eps)
    return s**2 / (alpha**2 * eps**2) + d / (alpha**2 * eps)


def theorem4_rate(alpha: Any, eps: Any, block_sizes: Sequence[int]) -> Any:
    r"""Order of 004 Thm 4 without constants: :math:`\sum_j k_j^2/(\alpha^2\varepsilon^2)`."""
    _check_alpha(alpha)
    k2 = float(np.sum(np.asarray(block_sizes, np.float64) ** 2))
    return k2 / (jnp.asarray(alpha) ** 2 * jnp.asarray(eps) ** 2)

