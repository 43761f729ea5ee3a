"""``uldp_jax/theory/_mse.py`` (issue 54 item 6): a user's closed form may depend on p and the instance
(``Family.item_nvar``), and a mechanism whose per-item estimator is biased gets an error that names
``ul.theory.exact_mse(..., affine='mechanism')``."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _family
from uldp_jax.mechanisms.core._reports import bits_table

from tests.outside_mechanisms import Keep
from tests.test_user_likelihoods import THE

D = 8
P = np.random.default_rng(1).dirichlet(np.ones(D))


class KeepNvar(Keep):
    """README's KeepRR with an instance- and p-dependent closed form (``Family.item_nvar``)."""

    def closed_form(self):
        def item_nvar(mech, p):
            k = mech.keep()
            q = (1 - k) / (mech.d - 1)
            f = q + (k - q) * p
            return f * (1 - f) / (k - q) ** 2

        return _family.Family("KeepNvar", None, None, None, ldp=True, item_nvar=item_nvar)


def test_a_users_closed_form_may_depend_on_p_and_the_instance():
    with jax.enable_x64(True):
        mine = float(ul.theory.mse(KeepNvar(D, 1.0), P, 1000))
        lib = float(ul.theory.mse(ul.GRR(D, 1.0), P, 1000))
    assert mine == pytest.approx(lib, rel=1e-9)
    with pytest.raises(TypeError, match="nmse and ul.tune need risk"):
        ul.theory.nmse(KeepNvar(D, 1.0), 0.0)


def test_theory_error_names_exact_mse_for_affine_mechanism():
    class Uneven(THE):  # "other" rates differ by input: the per-item estimator read off the channel is biased
        def channel_matrix(self):
            probs = np.where(np.eye(self.d, dtype=bool), 0.6, np.linspace(0.1, 0.3, self.d)[:, None])
            bits = bits_table(self.d)
            Q = np.prod(np.where(bits[None], probs[:, None, :], 1 - probs[:, None, :]), axis=-1)
            return Q, np.ones(2**self.d, bool)

    with pytest.raises(ValueError, match=r"ul.theory.exact_mse\(mech, p, n, affine='mechanism'\)"):
        with jax.enable_x64(True):
            ul.theory.mse(Uneven(4, 1.0), np.full(4, 0.25), 100)
