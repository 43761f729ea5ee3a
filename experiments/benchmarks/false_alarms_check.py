"""False alarms of ``ul.check`` on the library's own mechanisms, and GRR(5, 0.5)'s sampler row, exactly.

Part 1 (``--exact``): the law GRR's sampler realizes, computed exactly from its code (a flip when a uint32 word is
below ``floor(float32((d - 1) q) 2^32)``, the other item exactly uniform by Lemire's method with rejection), against
the channel; the noncentrality of the chi-square test it implies at ``draws`` reports per input, and so the
exact probability that the sampler row flags it, beside the level. It answers whether main's
``ul.check(GRR(5, 0.5))`` failure (p = 0.000187 against a level of 0.0002, default key) was the budgeted false
alarm or a real bias.

Part 2: ``ul.check`` on every registered library example (``tests/library_mechanisms.py``) at each eps, over
``--seeds`` keys, counting the failed rows. Every failure of a library mechanism is a false alarm (a row that
failed deterministically would fail on every seed and is reported as such); the promise is at most ``alpha``
per call (sampler and leak rows, ``alpha / 2`` each). ``--alpha`` is raised above the user's 1e-3 so that the
rate is measurable in a few thousand calls.

Usage::

    python experiments/benchmarks/false_alarms_check.py --exact
    python experiments/benchmarks/false_alarms_check.py --seeds 100 --alpha 0.05 --eps 0.5,1 [--out FILE.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402

import uldp_jax as ul  # noqa: E402
from uldp_jax.mechanisms.core import _uniform  # noqa: E402


def grr_realized(d: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(realized, Q)`` float64 ``[d, d]``: the law ``GRR(d, eps).perturb_batch`` draws, and the channel."""
    mech = ul.GRR(d, eps)
    _, other = mech.probs()  # float32, as perturb_batch computes them
    threshold = int(_uniform.threshold_u32((mech.d - 1) * other))  # perturb_batch's own threshold, same code
    flip = threshold / 2.0**32  # P(word < threshold), word uniform on [0, 2^32)
    realized = np.where(np.eye(d, dtype=bool), 1.0 - flip, flip / (d - 1))
    return realized, ul.channel(mech).Q


def exact_part(d: int = 5, eps: float = 0.5, draws: int = 20_000, alpha: float = 1e-3) -> dict:
    from scipy import stats  # benchmark dependency

    realized, Q = grr_realized(d, eps)
    lam = draws * float(np.max(np.sum((realized - Q) ** 2 / Q, axis=1)))  # noncentrality, worst input
    level = alpha / d
    crit = stats.chi2.isf(level, d - 1)
    flag_one = float(stats.ncx2.sf(crit, d - 1, lam)) if lam > 0 else level
    flag_any = 1.0 - (1.0 - flag_one) ** d
    return {"mechanism": f"GRR({d}, {eps})", "max_abs_realized_minus_Q": float(np.max(np.abs(realized - Q))),
            "noncentrality_per_input": lam, "level_per_input": level,
            "P_flag_per_input": flag_one, "P_flag_any_input": flag_any,
            "P_flag_any_input_if_exact": 1.0 - (1.0 - level) ** d, "P_flag_minus_level": flag_one - level}


def rates(seeds: int, alpha: float, eps_list: list[float], draws: int, trials: int) -> dict:
    from tests.library_mechanisms import distinct_examples

    out = {}
    for name, make in distinct_examples().items():
        for eps in eps_list:
            mech = make(eps)
            fails = collections.Counter()
            t0 = time.perf_counter()
            for s in range(seeds):
                rep = ul.check(mech, key=jax.random.key(1_000_003 * s + 17), draws=draws, trials=trials, alpha=alpha)
                for row in rep.failed:
                    fails[row] += 1
                fails["any"] += not rep.ok
            out[f"{name}@{eps}"] = {"calls": seeds, "failed": dict(fails), "skipped": list(rep.skipped),
                                    "s_per_call": (time.perf_counter() - t0) / seeds}
            print(f"{name:20s} eps={eps:<4g} calls={seeds} failed={dict(fails)} skipped={list(rep.skipped)} "
                  f"{out[f'{name}@{eps}']['s_per_call']:.2f} s/call", flush=True)
    calls = sum(v["calls"] for v in out.values())
    any_fail = sum(v["failed"].get("any", 0) for v in out.values())
    print(f"total: {any_fail} failed calls of {calls} ({any_fail / calls:.4f}; promised <= alpha = {alpha:g})")
    return {"alpha": alpha, "draws": draws, "trials": trials, "calls": calls, "failed_calls": any_fail,
            "per_mechanism": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exact", action="store_true", help="part 1 only: GRR(5, 0.5)'s realized law, exactly")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--eps", default="0.5,1")
    ap.add_argument("--draws", type=int, default=20_000)
    ap.add_argument("--trials", type=int, default=200_000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    result = {"exact": exact_part()}
    print(json.dumps(result["exact"], indent=1))
    if not args.exact:
        result["rates"] = rates(args.seeds, args.alpha, [float(e) for e in args.eps.split(",")], args.draws,
                                args.trials)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
