"""``uldp_jax/checks/_report.py``: a ``CheckReport``'s ok, failed, skipped, verdict and its printed table."""

from __future__ import annotations

import uldp_jax as ul
from uldp_jax import testing

from tests.outside_mechanisms import Keep
from tests.test_check import DRAWS, KEY, TRIALS


def test_check_passes_an_honest_mechanism_and_prints_a_table():
    rep = ul.check(Keep(4, 1.0), key=KEY, draws=DRAWS, trials=TRIALS, alpha=testing.ALPHA)
    assert rep.ok and rep.failed == () and rep.skipped == () and rep.verdict == "ok"
    text = str(rep)
    assert text.splitlines()[0] == "ul.check(Keep): ok"
    assert [line.split()[0] for line in text.splitlines()[1:]] == ["audit", "keys", "reports", "sampler", "leak",
                                                                    "debias", "rank", "likelihood", "draws"]
