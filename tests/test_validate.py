"""``uldp_jax._validate``: bad arguments raise ValueError/TypeError naming the argument and value, at construction
and across the public API (never a NaN, a hang or a large allocation)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

BAD_EPS = [0.0, -1.0, float("nan"), float("inf"), "1.0", None]


@pytest.mark.parametrize("eps", BAD_EPS)
@pytest.mark.parametrize("ctor", [
    lambda e: ul.GRR(4, e), lambda e: ul.RAPPOR(4, e), lambda e: ul.OUE(4, e), lambda e: ul.UE(4, e),
    lambda e: ul.URR(4, [0], e), lambda e: ul.URAP(4, [0], e), lambda e: ul.Warner(e), lambda e: ul.Mangat(e),
])
def test_bad_eps(ctor, eps):
    with pytest.raises((ValueError, TypeError), match="eps"):
        ctor(eps)


@pytest.mark.parametrize("theta", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_theta(theta):
    with pytest.raises(ValueError, match="theta"):
        ul.RAPPOR(4, 1.0, theta=theta)
    with pytest.raises(ValueError, match="theta"):
        ul.URAP(4, [1], 1.0, theta=theta)
    with pytest.raises(ValueError, match="p"):
        ul.UE(4, 1.0, p=theta)


@pytest.mark.parametrize("d", [1, 0, -3])
def test_bad_d(d):
    for ctor in (lambda: ul.GRR(d, 1.0), lambda: ul.RAPPOR(d, 1.0), lambda: ul.URR(d, [0], 1.0)):
        with pytest.raises(ValueError, match="d"):
            ctor()
    with pytest.raises(TypeError, match="d"):
        ul.GRR(4.0, 1.0)


@pytest.mark.parametrize("sensitive,exc", [
    ([], ValueError), ([1, 1], ValueError), ([0, 9], ValueError), ([-1], ValueError), ([0.5], TypeError),
    ("01", TypeError), (np.array([[0, 1]]), ValueError), ([True], TypeError),
])
def test_bad_sensitive_sets(sensitive, exc):
    with pytest.raises(exc, match="sensitive"):
        ul.URR(6, sensitive, 1.0)
    with pytest.raises(exc, match="sensitive"):
        ul.URAP(6, sensitive, 1.0)


def test_sensitive_sets_are_arbitrary_index_sets():
    m = ul.URR(6, np.array([5, 2]), 1.0)
    assert m.sensitive == (2, 5)
    assert ul.URAP(6, range(3, 5), 1.0).sensitive == (3, 4)


def test_bad_xs_for_perturb():
    import jax

    mech = ul.GRR(5, 1.0)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.array([0, 5]))
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.array([-1, 2]))
    with pytest.raises(TypeError, match="xs"):
        ul.perturb(key, mech, jnp.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.zeros((2, 2), jnp.int32))


def test_binary_ca_bad_input():
    with pytest.raises(ValueError, match="eps12"):
        ul.BinaryCA(-1.0, 1.0)
    with pytest.raises(ValueError, match="eps21"):
        ul.BinaryCA(1.0, 0.0)
    ul.BinaryCA(np.inf, 1.0)  # Mangat: allowed


def test_zero_reports_and_no_privacy_binary_are_refused():
    with pytest.raises(ValueError, match="n=0"):
        ul.estimate(ul.GRR(4, 1.0), jnp.zeros((0,), jnp.int32))
    with pytest.raises(ValueError, match="eps12"):
        ul.BinaryCA(float("inf"), float("inf"))


@pytest.mark.parametrize("value", [1 - 1e-9, 1e-46])
def test_keep_probabilities_must_survive_float32(value):
    with pytest.raises(ValueError, match="theta"):
        ul.RAPPOR(6, 5.0, theta=value)
    with pytest.raises(ValueError, match="theta"):
        ul.URAP(6, [1, 3], 5.0, theta=value)
    with pytest.raises(ValueError, match="p"):
        ul.UE(6, 20.0, p=value)


def test_bad_inputs_name_the_argument():
    mech = ul.GRR(6, 1.0)
    with pytest.raises(ValueError, match=r"ys in \[0, 6\), got 99"):
        ul.aggregate(mech, np.array([0, 99]))
    assert np.asarray(ul.estimate(mech, [0, 1, 2])).shape == (6,)  # a list of reports is a batch
    for p in ("uniform", np.array([True] * 6), np.full(6, 1 / 6 + 0j), np.full(6, 1 / 6, dtype=object)):
        with pytest.raises(TypeError, match="p"):
            ul.theory.mse(mech, p, 100)
        with pytest.raises(TypeError, match="p"):
            ul.simulate(jax.random.key(0), mech, p=p, n=10)
    with pytest.raises(ValueError, match="eps"):
        ul.theory.grr_nmse(-1.0, 6)
    with pytest.raises(ValueError, match="n="):
        ul.theory.nonprivate_l2(np.full(4, 0.25), -5)
    with pytest.raises(ValueError, match="theta_n"):
        ul.theory.urr_nmse(1.0, 3, 1.5)
    assert np.isfinite(float(ul.theory.mse(mech, np.full(6, 1 / 6), 10**15)))  # no int32 overflow


# ---- bad input across the public API (from tests/test_bad_inputs.py): cheap cases, d <= 8, a few users

KEY = jax.random.key(0)
GRR = ul.GRR(4, 1.0)
URR = ul.URR(4, [0], 1.0)
NAN, INF = float("nan"), float("inf")

# (label, thunk, exception, text the message must contain: the argument's name)
CONSTRUCTORS = [
    ("GRR d=1", lambda: ul.GRR(1, 1.0), ValueError, "d="),
    ("GRR d=2.0", lambda: ul.GRR(2.0, 1.0), TypeError, "d="),
    ("GRR d=True", lambda: ul.GRR(True, 1.0), TypeError, "d="),
    ("GRR eps=0", lambda: ul.GRR(4, 0.0), ValueError, "eps"),
    ("GRR eps=-1", lambda: ul.GRR(4, -1.0), ValueError, "eps"),
    ("GRR eps=nan", lambda: ul.GRR(4, NAN), ValueError, "eps"),
    ("GRR eps=inf", lambda: ul.GRR(4, INF), ValueError, "eps"),
    ("GRR eps='1'", lambda: ul.GRR(4, "1"), TypeError, "eps"),
    ("GRR eps=None", lambda: ul.GRR(4, None), TypeError, "eps"),
    ("URR sensitive=[]", lambda: ul.URR(4, [], 1.0), ValueError, "sensitive"),
    ("URR sensitive out of range", lambda: ul.URR(4, [4], 1.0), ValueError, "sensitive"),
    ("URR sensitive dup", lambda: ul.URR(4, [1, 1], 1.0), ValueError, "sensitive"),
    ("URR sensitive float", lambda: ul.URR(4, [0.5], 1.0), TypeError, "sensitive"),
    ("URR sensitive str", lambda: ul.URR(4, "0", 1.0), TypeError, "sensitive"),
    ("URAP theta=1", lambda: ul.URAP(4, [0], 1.0, theta=1.0), ValueError, "theta"),
    ("RAPPOR theta=0", lambda: ul.RAPPOR(4, 1.0, theta=0.0), ValueError, "theta"),
    ("UE p=2", lambda: ul.UE(4, 1.0, p=2.0), ValueError, "p"),
    ("OLH g=1", lambda: ul.OLH(4, 1.0, g=1), ValueError, "g"),
    ("OLH family", lambda: ul.OLH(4, 1.0, family="nope"), ValueError, "family"),
    ("OLH num_hashes=0", lambda: ul.OLH(4, 1.0, num_hashes=0), ValueError, "num_hashes"),
    ("SS k=0", lambda: ul.SS(4, 1.0, k=0), ValueError, "k"),
    ("SS k=d", lambda: ul.SS(4, 1.0, k=4), ValueError, "k"),
    ("Wheel l=0", lambda: ul.Wheel(4, 1.0, l=0.0), ValueError, "l"),
    ("Wheel l=1", lambda: ul.Wheel(4, 1.0, l=1.0), ValueError, "l"),
    ("UWheel theta_n=2", lambda: ul.UWheel(4, [0], 1.0, theta_n=2.0), ValueError, "theta_n"),
    ("UUE z_rule", lambda: ul.UUE(4, [0], 1.0, z_rule="nope"), ValueError, "z_rule"),
    ("ULH sensitive=all", lambda: ul.ULH(4, [0, 1, 2, 3], 1.0), ValueError, "sensitive"),
    ("HR d=1", lambda: ul.HR(1, 1.0), ValueError, "d="),
    ("BlockHR overlap", lambda: ul.BlockHR([[0, 1], [1, 2]], 1.0), ValueError, "blocks"),
    ("HighLowHR sensitive=[]", lambda: ul.HighLowHR(4, [], 1.0), ValueError, "sensitive"),
    ("BinaryCA eps12=-1", lambda: ul.BinaryCA(-1.0, 1.0), ValueError, "eps12"),
    ("Mangat eps=0", lambda: ul.Mangat(0.0), ValueError, "eps"),
    ("PUM num_tags=0", lambda: ul.PUM(4, [0], 0, 1.0), ValueError, "num_tags"),
    ("PUM base", lambda: ul.PUM(4, [0], 1, 1.0, base="nope"), (ValueError, TypeError), "base"),
    ("GLUTF base", lambda: ul.GLUTF(object(), 4, [0]), TypeError, "base"),
    ("GLUTF rule", lambda: ul.GLUTF(ul.GRR(2, 1.0), 4, [0, 1], rule="nope"), ValueError, "rule"),
    ("SS eps 2-D", lambda: ul.SS(4, np.ones((2, 2))), ValueError, "eps"),
]

GRR_YS = ul.perturb(KEY, GRR, jnp.arange(4))
CALLS = [
    # perturb
    ("perturb key=None", lambda: ul.perturb(None, GRR, jnp.arange(4)), TypeError, "key"),
    ("perturb key=int", lambda: ul.perturb(0, GRR, jnp.arange(4)), TypeError, "key"),
    ("perturb mech", lambda: ul.perturb(KEY, "GRR", jnp.arange(4)), TypeError, "mechanism"),
    ("perturb xs out of range", lambda: ul.perturb(KEY, GRR, jnp.array([0, 4])), ValueError, "xs"),
    ("perturb xs negative", lambda: ul.perturb(KEY, GRR, jnp.array([-1])), ValueError, "xs"),
    ("perturb xs float", lambda: ul.perturb(KEY, GRR, jnp.array([0.5])), TypeError, "xs"),
    ("perturb xs 2-D", lambda: ul.perturb(KEY, GRR, jnp.zeros((2, 2), jnp.int32)), ValueError, "xs"),
    # estimate
    ("estimate method", lambda: ul.estimate(GRR, GRR_YS, "nope"), ValueError, "nope"),
    ("estimate ys out of range", lambda: ul.estimate(GRR, jnp.array([0, 9])), ValueError, "ys"),
    ("estimate ys empty", lambda: ul.estimate(GRR, jnp.zeros((0,), jnp.int32)), ValueError, "ys"),
    ("estimate ys float", lambda: ul.estimate(GRR, jnp.array([0.5])), TypeError, "ys"),
    ("estimate ys of GRR into OLH", lambda: ul.estimate(ul.OLH(4, 1.0), GRR_YS), TypeError, "ys"),
    ("estimate ys of GRR into RAPPOR", lambda: ul.estimate(ul.RAPPOR(4, 1.0), GRR_YS), TypeError, "ys"),
    ("estimate bits wrong width", lambda: ul.estimate(ul.RAPPOR(4, 1.0), jnp.zeros((3, 5), bool)), ValueError, "ys"),
    ("estimate mech", lambda: ul.estimate(None, GRR_YS), TypeError, "mechanism"),
    # estimate_from_stats
    ("efs n=0", lambda: ul.estimate_from_stats(GRR, jnp.array([1, 1, 1, 1]), 0), ValueError, "n="),
    ("efs n=-1", lambda: ul.estimate_from_stats(GRR, jnp.array([1, 1, 1, 1]), -1), ValueError, "n="),
    ("efs n < reports", lambda: ul.estimate_from_stats(GRR, jnp.array([1, 1, 1, 1]), 3), ValueError, "n="),
    ("efs negative", lambda: ul.estimate_from_stats(GRR, jnp.array([5, -1, 0, 0]), 4), ValueError, "stats"),
    ("efs non-integer", lambda: ul.estimate_from_stats(GRR, jnp.array([1.5, 0.5, 1, 1]), 4), ValueError, "stats"),
    ("efs shape", lambda: ul.estimate_from_stats(GRR, jnp.array([1, 1, 2]), 4), ValueError, "stats"),
    ("efs stats=None", lambda: ul.estimate_from_stats(GRR, None, 4), TypeError, "stats"),
    ("efs method on reports", lambda: ul.estimate_from_stats(ul.OLH(4, 1.0, num_hashes=4),
                                                              jnp.array([1, 1, 1, 1]), 4, "em"), ValueError, "em"),
    # simulate
    ("simulate key", lambda: ul.simulate(None, GRR, p=np.ones(4) / 4, n=10), TypeError, "key"),
    ("simulate neither xs nor p", lambda: ul.simulate(KEY, GRR), ValueError, "xs"),
    ("simulate both xs and p", lambda: ul.simulate(KEY, GRR, xs=jnp.arange(4), p=np.ones(4) / 4), ValueError, "xs"),
    ("simulate n without p", lambda: ul.simulate(KEY, GRR, xs=jnp.arange(4), n=4), ValueError, "n"),
    ("simulate p no n", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4), TypeError, "n="),
    ("simulate p sum", lambda: ul.simulate(KEY, GRR, p=np.ones(4), n=10), ValueError, "p"),
    ("simulate p negative", lambda: ul.simulate(KEY, GRR, p=[1.5, -0.5, 0, 0], n=10), ValueError, "p"),
    ("simulate p nan", lambda: ul.simulate(KEY, GRR, p=[NAN, 0, 0, 1], n=10), ValueError, "p"),
    ("simulate p length", lambda: ul.simulate(KEY, GRR, p=np.ones(3) / 3, n=10), ValueError, "p"),
    ("simulate n=0", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=0), ValueError, "n="),
    ("simulate n=2.5", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=2.5), TypeError, "n="),
    ("simulate reps=0", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, reps=0), ValueError, "reps"),
    ("simulate reps=1.5", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, reps=1.5), TypeError, "reps"),
    ("simulate xs empty", lambda: ul.simulate(KEY, GRR, xs=jnp.zeros((0,), jnp.int32)), ValueError, "xs"),
    ("simulate xs range", lambda: ul.simulate(KEY, GRR, xs=jnp.array([7])), ValueError, "xs"),
    ("simulate path", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, path="fast"), ValueError, "path"),
    ("simulate shard", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, shard="x"), ValueError, "shard"),
    ("simulate block_size", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, block_size=0), ValueError,
     "block_size"),
    ("simulate chunk_blocks", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, path="per_user",
                                                  chunk_blocks=0), ValueError, "chunk_blocks"),
    ("simulate rep_batch", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, rep_batch=0), ValueError,
     "rep_batch"),
    ("simulate rep_chunk", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, rep_chunk=0), ValueError,
     "rep_chunk"),
    ("simulate methods unknown", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, methods=("nope",)),
     ValueError, "nope"),
    ("simulate methods empty", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, methods=()), ValueError,
     "methods"),
    ("simulate methods int", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, methods=3), TypeError,
     "methods"),
    ("simulate method_options key", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10,
                                                        method_options={"em": {}}), ValueError, "method_options"),
    ("simulate method_options type", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10,
                                                         method_options=[1]), TypeError, "method_options"),
    ("simulate progress", lambda: ul.simulate(KEY, GRR, p=np.ones(4) / 4, n=10, progress="loud"),
     (ValueError, TypeError), "progress"),
    ("simulate mech", lambda: ul.simulate(KEY, object(), p=np.ones(4) / 4, n=10), TypeError, "mechanism"),
    # channel / audit
    ("channel object", lambda: ul.channel(object()), TypeError, "mechanism"),
    ("channel too big", lambda: ul.channel(ul.GRR(20000, 1.0)), ValueError, "entries"),
    ("audit too big", lambda: ul.audit(ul.GRR(10**9, 1.0)), ValueError, "entries"),
    ("audit URR too big", lambda: ul.audit(ul.URR(10**9, [0], 1.0)), ValueError, "entries"),
    ("audit PUM too big", lambda: ul.audit(ul.PUM(10**6, [0], 1, 1.0)), ValueError, "entries"),
    ("audit tol=0", lambda: ul.audit(GRR, tol=0.0), ValueError, "tol"),
    ("audit tol=1", lambda: ul.audit(GRR, tol=1.0), ValueError, "tol"),
    ("audit E shape", lambda: ul.audit(GRR, E=np.zeros((3, 3))), ValueError, "E"),
    ("audit E nan", lambda: ul.audit(GRR, E=np.full((4, 4), NAN)), ValueError, "E"),
    ("audit E all inf", lambda: ul.audit(GRR, E=np.full((4, 4), INF)), ValueError, "E"),
    ("audit grid with a bad point", lambda: ul.audit(jax.vmap(lambda e: ul.GRR(4, e))(jnp.array([1.0, -2.0]))),
     ValueError, "eps"),
    ("audit_pum personals", lambda: ul.audit_pum(ul.PUM(4, [0], 1, 1.0), [1]), ValueError, "personals"),
    # theory
    ("theory.mse n=0", lambda: ul.theory.mse(GRR, np.ones(4) / 4, 0), ValueError, "n="),
    ("theory.mse n=str", lambda: ul.theory.mse(GRR, np.ones(4) / 4, "5"), TypeError, "n="),
    ("theory.mse p", lambda: ul.theory.mse(GRR, np.ones(4), 10), ValueError, "p"),
    ("theory.mse model", lambda: ul.theory.mse(GRR, np.ones(4) / 4, 10, model="x"), ValueError, "model"),
    ("theory.nmse theta_n", lambda: ul.theory.nmse(URR, 1.5), ValueError, "theta_n"),
    ("theory.exact_mse p", lambda: ul.theory.exact_mse(GRR, np.ones(3) / 3, 10), ValueError, "p"),
    ("theory.exact_mse n", lambda: ul.theory.exact_mse(GRR, np.ones(4) / 4, -2), ValueError, "n="),
    ("theory.l1 n", lambda: ul.theory.l1(GRR, np.ones(4) / 4, 0), ValueError, "n="),
    # tune / recommend
    ("tune objective", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=0.5, objective="x"), ValueError, "objective"),
    ("tune theta_n", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=1.5), ValueError, "theta_n"),
    ("tune p and theta_n", lambda: ul.tune(ul.URAP(4, [0], 1.0), p=np.ones(4) / 4, theta_n=0.5), ValueError, "p="),
    ("tune p", lambda: ul.tune(ul.URAP(4, [0], 1.0), p=np.ones(4)), ValueError, "p"),
    ("tune no param", lambda: ul.tune(GRR), TypeError, "mech"),
    ("tune params", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=0.5, params=("eps",)), ValueError, "params"),
    ("tune steps=0", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=0.5, steps=0), ValueError, "steps"),
    ("tune steps=str", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=0.5, steps="9"), TypeError, "steps"),
    ("tune audit", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=0.5, audit="yes"), TypeError, "audit"),
    ("tune return_info", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=0.5, return_info=2), TypeError,
     "return_info"),
    ("tune optimizer", lambda: ul.tune(ul.URAP(4, [0], 1.0), theta_n=0.5, optimizer="adam"), TypeError,
     "optimizer"),
    ("tune mech", lambda: ul.tune("URAP", theta_n=0.5), TypeError, "mech"),
    ("recommend d", lambda: ul.recommend(1, [0], 1.0, 0.5), ValueError, "d="),
    ("recommend eps", lambda: ul.recommend(4, [0], -1.0, 0.5), ValueError, "eps"),
    ("recommend theta_n", lambda: ul.recommend(4, [0], 1.0, 2.0), ValueError, "theta_n"),
    ("recommend sensitive all", lambda: ul.recommend(4, [0, 1, 2, 3], 1.0, 0.5), ValueError, "sensitive"),
    ("recommend sort_by", lambda: ul.recommend(4, [0], 1.0, 0.5, sort_by="x"), ValueError, "sort_by"),
    ("recommend n", lambda: ul.recommend(4, [0], 1.0, 0.5, n=0), ValueError, "n="),
    ("recommend model", lambda: ul.recommend(4, [0], 1.0, 0.5, model="x"), ValueError, "model"),
]


def _check(thunk, exc, word):
    with pytest.raises(exc) as info:
        thunk()
    assert word in str(info.value), f"message does not name {word!r}: {info.value}"


@pytest.mark.parametrize("label,thunk,exc,word", CONSTRUCTORS, ids=[c[0] for c in CONSTRUCTORS])
def test_constructor(label, thunk, exc, word):
    _check(thunk, exc, word)


@pytest.mark.parametrize("label,thunk,exc,word", CALLS, ids=[c[0] for c in CALLS])
def test_call(label, thunk, exc, word):
    _check(thunk, exc, word)
