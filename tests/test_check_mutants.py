"""``ul.check`` catches each wrong user mechanism of issue 53 ("ul.check passes user mechanisms that are wrong")
and issue 54 (a misspecified ``Likelihood(product=...)``, a biased CMS estimator, skipped rows in the verdict),
each one a ``ul.Mechanism`` subclass defined outside the package (``tests/check_mutants.py``), and passes their
honest versions.

Power, not false alarms: a call that must FAIL uses the user's default level (a false alarm there would make the
test pass, not fail, so it spends none of the suite's budget); a call that must pass uses ``alpha=testing.ALPHA``
(its sampler and leak rows are two checks of the suite's budget). The mechanisms are small (d <= 8) and share
shapes, so the compiled programs are reused.
"""

from __future__ import annotations

import jax
import pytest

import uldp_jax as ul
from uldp_jax import testing

from tests import check_mutants as cm
from tests.outside_mechanisms import Keep

KEY = jax.random.key(0)


def _check(mech, **kw):
    return ul.check(mech, key=KEY, **kw)


@pytest.mark.parametrize("mech, row, says", [
    (cm.KeyIgnored(4, 1.0), "keys", "ignores its key"),
    (cm.NumpyRandom(4, 1.0), "keys", "NumPy"),
    (cm.NegativeReports(4, 1.0), "reports", "gave report -1"),
    (cm.PairReports(4, 1.0), "reports", "gave report [0, 0]"),
    (cm.FractionLeak(4, 1.0), "reports", "float32"),
    (cm.ClippedDebias(4, 1.0), "debias", "not affine"),
    (cm.FixedNDebias(4, 1.0), "debias", "n=17"),
    (cm.ShortDebias(4, 1.0), "debias", "shape (3,)"),
    (cm.THE(4, 1.0), "likelihood", "product"),
], ids=["key-ignored", "numpy-random", "negative-reports", "pair-reports", "float-reports", "clipped-debias",
        "debias-ignores-n", "short-debias", "the-product-likelihood"])
def test_check_fails_the_row_that_is_wrong_and_names_it(mech, row, says):
    rep = _check(mech, draws=2000, trials=2000)
    assert not rep.ok and row in rep.failed, str(rep)
    assert says in rep[row].detail, str(rep)
    assert rep.verdict.startswith("FAILED: ") and row in rep.verdict


def test_honest_outside_mechanisms_pass_every_row():
    rep = _check(Keep(4, 1.0), alpha=testing.ALPHA)
    assert rep.ok and rep.skipped == () and rep.verdict == "ok", str(rep)
