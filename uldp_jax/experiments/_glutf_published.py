"""003's published (ULDP-violating) z for uLH/uWheel, with two parameter choices, and its audited eps.

"published z" uses the library's MSE-optimal ``g`` (uWheel: ``l = 1/g*``); "published z, eq 49 g" uses 003's own
choice, eq 49's ``g`` (rounded to the nearest integer >= 2) and eq 63's ``l = 1/g_49``. Both exceed eps
(docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp); ``audited_published`` measures by how much.
"""

from __future__ import annotations

import math

import uldp_jax as ul

# 003's published (ULDP-violating) z, with the library's MSE-optimal g (uWheel: l = 1/g*) ...
PUBLISHED = {"uLH (published z)": "ULH", "uWheel (published z)": "UWheel"}
# ... and with 003's own parameter choice, eq 49's g (nearest integer >= 2) and eq 63's l = 1/g_49.
PUBLISHED_EQ49 = {"uLH (published z, eq 49 g)": "ULH", "uWheel (published z, eq 63 l)": "UWheel"}


def eq49_g(eps: float, s: int, theta_n: float) -> float:
    """003 eq 49 (continuous): ``g = e sqrt((e (s + theta - 1) - theta + 1) / (e (e + s - 1))) + 1``; eq 63 is
    ``l = 1 / g``. 003 derives it from an ``s >> g`` approximation of its MSE (see docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l)."""
    e = math.exp(eps)
    return e * math.sqrt((e * (s + theta_n - 1) - theta_n + 1) / (e * (e + s - 1))) + 1


def published_mech(label: str, d: int, sens: tuple, eps: float, theta_n: float):
    """The published-z uLH/uWheel named by ``label`` (a key of ``PUBLISHED`` or ``PUBLISHED_EQ49``)."""
    if label in PUBLISHED:
        return getattr(ul, PUBLISHED[label])(d, sens, eps, theta_n=theta_n, z_rule="published_unsafe")
    g = eq49_g(eps, len(sens), theta_n)
    par = {"g": max(2, int(round(g)))} if PUBLISHED_EQ49[label] == "ULH" else {"l": 1.0 / g}
    return getattr(ul, PUBLISHED_EQ49[label])(d, sens, eps, theta_n=theta_n, z_rule="published_unsafe", **par)



def audited_published(label: str, ds, eps_list) -> list:
    """The eps that 003's published-z uLH/uWheel really give, by ``ul.audit`` of the exact channel.

    The audit needs an explicit channel, so it runs on a same-``s`` instance with two non-sensitive items, the
    dataset's hash range ``g`` (uWheel: ``l``) and an explicit family of a few hash seeds: the published z
    depends only on (eps, s, g or l), and the worst ratio is between two sensitive inputs on a protected output,
    so this is the dataset's mechanism restricted to X_S. A finite seed subset can only miss bad seeds: the
    audited eps is a lower bound on the real one. For uLH the closed form (docs/errata.md) of the worst fixed-H ratio,
    eps + ln(1 + (s - 1)(e - 1) / (g (e + s - 1))), is given too.
    """
    out = []
    for e in eps_list:
        big = published_mech(label, ds.d, ds.sensitive, e, ds.theta_n)
        kind = PUBLISHED.get(label) or PUBLISHED_EQ49[label]
        cls, par = (ul.ULH, "g") if kind == "ULH" else (ul.UWheel, "l")
        seeds = 16 if ds.s < 100 else 2
        small = cls(ds.s + 2, tuple(range(ds.s)), e, theta_n=ds.theta_n, z_rule="published_unsafe", num_hashes=seeds,
                    **{par: getattr(big, par)})
        rep = ul.audit(small)
        closed = float("nan")
        if par == "g":
            ee, g = math.exp(e), big.g
            closed = e + math.log1p((ds.s - 1) * (ee - 1) / (g * (ee + ds.s - 1)))
        out.append(dict(dataset=ds.name, mechanism=label, eps=e, metric="audited eps", value=float(rep.eps), se=0.0,
                        closed_form_eps=closed, audit_ok=bool(rep.ok), audit_seeds=seeds, n=ds.n, d=ds.d, s=ds.s,
                        theta_n=round(ds.theta_n, 4)))
    return out
