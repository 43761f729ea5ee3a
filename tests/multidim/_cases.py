"""The product protocols the multidim tests share (tests/multidim/test_*.py): SPL, SMP and RS+FD over small
domains, each with its oracle, budget and fake rule in its name."""

import uldp_jax as ul
from uldp_jax import multidim as md

CASES = {
    "spl-grr-34": lambda: md.spl(ul.GRR, (3, 4), 1.0),
    "spl-oue-232": lambda: md.spl(ul.OUE, (2, 3, 2), 1.5),
    "spl-sue-34": lambda: md.spl(ul.SUE, (3, 4), 2.0),
    "smp-grr-34": lambda: md.smp(ul.GRR, (3, 4), 1.0),
    "smp-oue-232": lambda: md.smp(ul.OUE, (2, 3, 2), 1.5),
    "rsfd-grr-34": lambda: md.rsfd(ul.GRR, (3, 4), 1.0),
    "rsfd-grr-232": lambda: md.rsfd(ul.GRR, (2, 3, 2), 0.5),
    "rsfd-ouez-232": lambda: md.rsfd(ul.OUE, (2, 3, 2), 1.0, fake="z"),
    "rsfd-suez-34": lambda: md.rsfd(ul.SUE, (3, 2), 2.0, fake="z"),
    "rsfd-ouer-232": lambda: md.rsfd(ul.OUE, (2, 3, 2), 1.0, fake="r"),
    "rsfd-suer-34": lambda: md.rsfd(ul.SUE, (3, 2), 2.0, fake="r"),
}
