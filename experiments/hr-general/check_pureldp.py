"""Checks the hr-general experiment's pure-LDP risk against pure-LDP's own HR code (not run in CI).

pure-LDP 1.2.0 (`pip install pure-ldp==1.2.0`, the `bench` extra) ships the authors' `k2k_hadamard` module. This
script enumerates its encoder's randomness (the uniform draw and the coin) to get its exact channel Q, decodes
every single report with its `decode_string(..., normalization=-1)` (linear in the report histogram) to get its
decoder G, and compares the exact n E l2^2 = q (G^2 1) - |q G|^2, q = p Q, with the closed form used by the
experiment (`uldp_jax.mechanisms.hadamard._general_forms.l2_risk` on the permuted p; `ul.theory.hr_l2_risk` for
eps <= 1, where pure-LDP uses the high-privacy HR), for three random permutations each.

    python experiments/hr-general/check_pureldp.py            # pure-LDP installed
    PURE_LDP_SRC=/path/to/k2k_hadamard_dir python ...         # or the folder holding k2k_hadamard.py
"""

from __future__ import annotations

import os
import random
import sys

import numpy as np


def _module():
    try:
        from pure_ldp.frequency_oracles.hadamard_response.internal import k2k_hadamard
        return k2k_hadamard
    except ImportError:
        sys.path.insert(0, os.environ["PURE_LDP_SRC"])
        import k2k_hadamard
        return k2k_hadamard


def pure_ldp_exact(kh, d: int, eps: float, seed: int):
    """(encoder object, exact channel Q [d, K], decoder G [K, d]) of pure-LDP's HR at (d, eps)."""
    np.random.seed(seed)
    random.seed(seed)
    hr = kh.Hadamard_Rand_high_priv(d, eps) if eps <= 1 else kh.Hadamard_Rand_general_original(d, eps)
    K = hr.outsz
    Q = np.zeros((d, K))
    saved = np.random.randint, random.randint, random.random
    try:
        for x in range(d):
            sym = x if eps <= 1 else hr.permute[x]
            for out1 in range(K):
                for coin in (0.0, 0.999999):  # the two branches of the encoder's coin
                    np.random.randint = random.randint = lambda lo, hi, _o=out1: _o
                    random.random = lambda _c=coin: _c
                    y = hr.encode_symbol(sym)
                    if eps <= 1:
                        pr = hr.pri_para if coin == 0.0 else 1 - hr.pri_para
                    else:
                        lam = 2 * hr.part / (2 * hr.part - 1 + hr.exp)
                        pr = lam if coin == 0.0 else 1 - lam
                    Q[x, y] += pr / K
    finally:
        np.random.randint, random.randint, random.random = saved
    G = np.stack([np.asarray(hr.decode_string([y], iffast=1, normalization=-1)) for y in range(K)])
    return hr, Q, G


def main() -> int:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    import uldp_jax as ul
    from uldp_jax.mechanisms.hadamard import _general_forms as F

    kh = _module()
    rng = np.random.default_rng(0)
    worst = 0.0
    for d in (16, 30):
        p = rng.dirichlet(np.full(d, 0.5))
        for eps in (1.0, 2.0, 4.0, 6.0):
            for seed in range(3):
                hr, Q, G = pure_ldp_exact(kh, d, eps, seed)
                q = p @ Q
                risk = float(q @ (G**2).sum(1) - ((q @ G) ** 2).sum())
                if eps <= 1:
                    mine = float(ul.theory.hr_l2_risk(eps, jnp.asarray(p)))
                else:
                    pp = np.zeros(d)
                    pp[np.asarray(hr.permute, int)] = p  # item x sits at slot permute[x]
                    mine = float(F.l2_risk(eps, jnp.asarray(pp), hr.part))
                    assert hr.part == F.authors_blocks(d, eps) and hr.partsz == F.block_size(d, hr.part)
                bias = float(np.abs(q @ G - p).max())
                worst = max(worst, abs(risk / mine - 1))
                print(f"d={d} eps={eps} seed={seed}: pure-LDP exact {risk:.6g}, closed form {mine:.6g}, "
                      f"max |bias| {bias:.1e}")
    print(f"largest relative difference: {worst:.1e}")
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
