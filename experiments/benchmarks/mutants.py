"""Mutation run over the package code (issue 48, "the proof that nothing was lost"): does the test suite kill
small, realistic bugs in ``uldp_jax/``?

Each mutant replaces one source snippet (exactly once in its file) by a wrong one that models a real bug (decoders,
samplers, audits, keys, EM stopping, count samplers, studies, ``ul.check``, validation, theory, post-processing,
PUM, multidimensional and longitudinal protocols; ``--list`` says which). A mutant is *killed* when a
test fails (exit code 1; 2 when pytest-xdist interrupts the ``-x`` run after that failure), *survives* when the
suite passes (exit code 0); any other outcome (a collection error, no tests) is an error.

Each mutant runs in a throw-away copy (``git archive`` of ``--repo``'s commit, never its working tree, which is
not touched): the substitution is applied there and ``python -m pytest -x -p no:cacheprovider <home> tests`` runs
from the copy with ``PYTHONPATH`` pointing at it (the home tests, the ones written for that code, run first;
pytest drops the duplicates). ``--tests-from`` takes ``tests/`` and pyproject.toml's pytest table from another
checkout, so two versions of the suite can be compared on the same package.

Usage::

    python experiments/benchmarks/mutants.py --list
    python experiments/benchmarks/mutants.py --verify                 # every snippet once in this checkout (fast)
    python experiments/benchmarks/mutants.py run --repo . --out experiments/benchmarks/mutants_<label>.json \\
        [--tests-from PATH2] [--only a,b] [--timeout 1800] [--home-only] [--pytest-args "-n 1"] [--baseline]

The JSON (``experiments/benchmarks/mutants_<label>.json``; ``<label>`` names the suite version) is rewritten after
every mutant, so an interrupted run keeps its results (``--resume`` skips the mutants it holds); a table is printed
at the end. Per mutant: status, pytest's exit code, seconds to the verdict, the first failing test's node id.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One substitution: ``old`` (exactly once in ``path``) becomes ``new``; ``home`` are the tests run first."""

    name: str
    kind: str
    path: str
    old: str
    new: str
    why: str
    home: tuple[str, ...]


def _m(name: str, kind: str, path: str, old: str, new: str, why: str, *home: str) -> Mutant:
    return Mutant(name, kind, path, old, new, why, tuple(home))


MECH = "uldp_jax/mechanisms/"
MUTANTS: tuple[Mutant, ...] = (
    # ---- decoders / estimators
    _m("grr_debias_slope", "decoder", MECH + "rr/_grr.py",
       "(1.0 + (self.d - 1) * jnp.exp(-jnp.asarray(self.eps)))",
       "(1.0 + self.d * jnp.exp(-jnp.asarray(self.eps)))",
       "GRR's affine slope p - q written with d instead of d - 1 (a biased decoder; EM's channel products read it)",
       "tests/mechanisms/rr", "tests/test_mutants.py"),
    _m("urr_debias_offset_nonsensitive", "decoder", MECH + "rr/_urr.py",
       "jnp.where(sens, c2, 0.0)))", "jnp.full((self.d,), c2)))",
       "uRR's debias subtracts the offset c2 on non-sensitive items too (their support has no offset)",
       "tests/mechanisms/rr", "tests/test_mutants.py"),
    _m("ue_gap_drops_factor", "decoder", MECH + "unary/_ue.py",
       "return keep * omk * (-jnp.expm1(-eps)) / (omk + keep * jnp.exp(-eps))",
       "return keep * (-jnp.expm1(-eps)) / (omk + keep * jnp.exp(-eps))",
       "the UE/RAPPOR gap keep - q loses its (1 - keep) factor (biased OUE, SUE and uRAP decoders)",
       "tests/test_mutants.py", "tests/theory/test_closed_forms.py"),
    _m("urap_debias_nonsensitive_slope", "decoder", MECH + "unary/_urap.py",
       "_ue.ue_gap(theta, self.eps, omt), keep_n)", "_ue.ue_gap(theta, self.eps, omt), theta)",
       "uRAP debiases a non-sensitive bit with slope theta instead of theta (1 - e^-eps)",
       "tests/test_check.py", "tests/theory/test_closed_forms.py"),
    _m("ss_debias_denominator", "decoder", MECH + "subset/_ss.py",
       "/ ((k + (d - k) * t) * (d - 1))", "/ ((k + (d - k) * t) * d)",
       "SS's gap p* - q* divided by d instead of d - 1 (a biased subset-selection decoder)",
       "tests/test_mutants.py"),
    _m("olh_debias_gap", "decoder", MECH + "hashing/_olh.py",
       "gap = (self.g - 1) * -jnp.expm1(", "gap = self.g * -jnp.expm1(",
       "OLH's gap p* - 1/g written with g instead of g - 1 (a biased local-hashing decoder)",
       "tests/test_mutants.py"),
    _m("hr_decode_row_x", "decoder", MECH + "hadamard/_hr.py",
       "W[..., 1 : self.d + 1] * scale", "W[..., 0 : self.d] * scale",
       "HR decodes item x from Hadamard row x instead of x + 1 (docs/errata.md 004 eq 13)",
       "tests/mechanisms/hadamard/test_hr.py"),
    _m("rhr_factor", "decoder", MECH + "hadamard/_rhr.py",
       "(1.0 + (2.0**b - 1.0) * t)", "(1.0 + 2.0**b * t)",
       "RHR's 1/(p - q) of 2^b-ary RR counts 2^b other outputs instead of 2^b - 1 (decoder and variance)",
       "tests/mechanisms/hadamard/test_rhr.py"),
    _m("wheel_debias_gap", "decoder", MECH + "wheel/_wheel.py",
       "gap = l * (1.0 - l) * -jnp.expm1(", "gap = l * -jnp.expm1(",
       "Wheel's gap p* - q* loses its (1 - l) factor (a biased Wheel decoder)",
       "tests/test_mutants.py"),
    _m("glutf_debias_z_not_zstar", "decoder", MECH + "transform/_glutf_core.py",
       "zs = self.z_star()", "zs = self.z()",
       "GLUTF debiases non-sensitive items with z instead of z* = 1 - f + f z (003 Thm 5)",
       "tests/mechanisms/core/test_pure_uldp.py"),
    _m("rsfd_decoder_fake_weight", "multidim", "uldp_jax/multidim/_marginals.py",
       "(k * s / n - (k - 1) * fake_support(o, fake) - b) / a", "(k * s / n - k * fake_support(o, fake) - b) / a",
       "RS+FD's marginal estimator subtracts k fake reports per user instead of k - 1",
       "tests/multidim/test_marginals.py", "tests/multidim/test_rsfd.py"),
    # ---- samplers (perturb) that are off
    _m("grr_flip_probability", "perturb", MECH + "rr/_grr.py",
       "jnp.uint32), (self.d - 1) * other_p)", "jnp.uint32), self.d * other_p)",
       "GRR flips with probability d q instead of (d - 1) q (the wrong keep probability)",
       "tests/mechanisms/rr"),
    _m("grr_other_includes_own", "perturb", MECH + "rr/_grr.py",
       "other = r + (r >= xs).astype(jnp.int32)", "other = r + (r > xs).astype(jnp.int32)",
       "GRR's 'other' item off by one: it can be the true item and never d - 1",
       "tests/mechanisms/rr"),
    _m("urr_nonsensitive_keep", "perturb", MECH + "rr/_urr.py",
       "max(self.s - 1, 0) * c2, self.s * c2)", "max(self.s - 1, 0) * c2, (self.s - 1) * c2)",
       "uRR moves a non-sensitive item with probability (s - 1) c2 instead of s c2 (kept too often)",
       "tests/mechanisms/rr"),
    _m("ue_own_bit_shifted", "perturb", MECH + "unary/_ue.py",
       "own = xs[..., None] == jnp.arange(self.d, dtype=xs.dtype)",
       "own = xs[..., None] == jnp.arange(1, self.d + 1, dtype=xs.dtype)",
       "UE/RAPPOR's per-user sampler keeps bit x + 1 instead of bit x (an off-by-one one-hot encoding)",
       "tests/test_check.py"),
    _m("urap_nonsensitive_bit", "perturb", MECH + "unary/_urap.py",
       "dtype=jnp.float32) < keep_n)", "dtype=jnp.float32) < theta)",
       "uRAP sets a non-sensitive own bit with probability theta instead of theta (1 - e^-eps)",
       "tests/test_check.py"),
    _m("olh_other_includes_hash", "perturb", MECH + "hashing/_olh.py",
       "xs.shape, 0, self.g - 1, dtype=jnp.int32)", "xs.shape, 0, self.g, dtype=jnp.int32)",
       "OLH's 'other' hash value off by one: it can be H(x) itself (kept too often)",
       "tests/test_check.py"),
    _m("hr_plus_prob_half_eps", "perturb", MECH + "hadamard/_hr.py",
       "return jax.nn.sigmoid(jnp.asarray(eps))", "return jax.nn.sigmoid(jnp.asarray(eps) / 2.0)",
       "the Hadamard samplers (HR, BlockHR, HighLowHR) pick the +1 set with e^(eps/2) odds instead of e^eps",
       "tests/mechanisms/hadamard/test_hr.py", "tests/mechanisms/hadamard/test_hr_family.py"),
    _m("glutf_fake_input_range", "perturb", MECH + "transform/_glutf_core.py",
       "xs.shape, 0, self.s, dtype=jnp.int32)", "xs.shape, 0, self.s - 1, dtype=jnp.int32)",
       "GLUTF's uniform fake base input for non-sensitive users never takes the last sensitive item",
       "tests/mechanisms/transform/test_glutf_core.py"),
    _m("rsfd_never_samples_last", "multidim", "uldp_jax/multidim/_rsfd.py",
       "sel = jax.random.randint(ksel, n, 0, k, jnp.int32)", "sel = jax.random.randint(ksel, n, 0, k - 1, jnp.int32)",
       "RS+FD never samples the last attribute (an off-by-one sampled index): its reports are all fake",
       "tests/multidim/test_protocols.py"),
    _m("lgrr_other_includes_own", "longitudinal", "uldp_jax/longitudinal/_base.py",
       "jax.random.randint(k_other, x.shape, 0, m - 1)) % m", "jax.random.randint(k_other, x.shape, 0, m)) % m",
       "the memoized GRR draws its 'other' value among m instead of m - 1 shifts: it can be the kept value",
       "tests/longitudinal"),
    _m("lsue_keep_full_eps", "longitudinal", "uldp_jax/longitudinal/_params.py",
       "p = 1.0 / (1.0 + math.exp(-eps / 2.0))", "p = 1.0 / (1.0 + math.exp(-eps))",
       "L-SUE / dBitFlipPM's SUE keep probability from eps instead of eps / 2 (the memo spends 2 eps_perm)",
       "tests/longitudinal"),
    # ---- privacy audit
    _m("audit_skips_last_column", "audit", "uldp_jax/privacy/_audit.py",
       "L = pairwise_log_ratios(logq, protected, log=True)",
       "L = pairwise_log_ratios(logq[:, :-1], protected[:-1], log=True)",
       "the audit's pair constraints skip the last protected output column",
       "tests/test_mutants.py", "tests/privacy/test_audit.py"),
    _m("audit_loose_tolerance", "audit", "uldp_jax/privacy/_audit.py",
       "pairs_ok = bool(np.all(slack <= tol * np.maximum(", "pairs_ok = bool(np.all(slack <= 1e-3 + tol * np.maximum(",
       "the audit accepts a log-ratio up to 1e-3 nats over its bound (a loosened tolerance)",
       "tests/privacy/test_audit_integrity.py"),
    _m("channel_row_sum_loose", "audit", "uldp_jax/privacy/_channel.py",
       "ROW_SUM_ATOL = 1e-9", "ROW_SUM_ATOL = 1e-3",
       "channel validation accepts rows summing to 1 +- 1e-3 (a channel that is not a probability matrix)",
       "tests/privacy/test_channel.py"),
    # ---- keys shared between repetitions, user blocks, n, rounds, users
    _m("reps_share_keys_per_user", "keys", "uldp_jax/engine/_kernels.py",
       "key_r = jax.random.fold_in(key, jnp.maximum(r, 0))\n        if axis",
       "key_r = jax.random.fold_in(key, jnp.maximum(r, 0) // 2)\n        if axis",
       "on the per-user path repetitions 2k and 2k + 1 share one key (identical statistics)",
       "tests/test_mutants.py"),
    _m("reps_share_keys_counts", "keys", "uldp_jax/engine/_kernels.py",
       "fold_in(key, jnp.maximum(r, 0))  # padding", "fold_in(key, jnp.maximum(r, 0) // 2)  # padding",
       "on the counts path repetitions 2k and 2k + 1 share one key (identical statistics)",
       "tests/test_mutants.py"),
    _m("blocks_share_keys", "keys", "uldp_jax/engine/_layout.py",
       "jax.random.split(jax.random.fold_in(key_r, b))", "jax.random.split(jax.random.fold_in(key_r, b // 2))",
       "user blocks 2k and 2k + 1 of a repetition share one key (same users in the iid model, same noise)",
       "tests/test_mutants.py"),
    _m("study_n_share_keys", "keys", "uldp_jax/studies/_run.py",
       "key_mj = jax.random.fold_in(jax.random.fold_in(key, m_idx), j)",
       "key_mj = jax.random.fold_in(jax.random.fold_in(key, m_idx), 0)",
       "ul.study runs every n of a mechanism from one key (breaks the documented key schedule)",
       "tests/studies/test_run.py"),
    _m("longitudinal_rounds_share_irr_key", "longitudinal", "uldp_jax/longitudinal/_simulate.py",
       "return mech.irr(jax.random.fold_in(k_irr, t), z)", "return mech.irr(k_irr, z)",
       "every round's instantaneous response reuses one key (the IRR noise repeats across rounds)",
       "tests/longitudinal"),
    _m("longitudinal_users_share_memo", "longitudinal", "uldp_jax/longitudinal/_simulate.py",
       "(k_perm, users)", "(k_perm, users // 2)",
       "users 2k and 2k + 1 share one memo key (their permanent responses are correlated)",
       "tests/longitudinal"),
    # ---- EM that stops early
    _m("em_iteration_cap", "em", "uldp_jax/estimation/_em_core.py",
       "return (s.num_steps < max_iters) & (jnp.abs(s.loglik_change) > tol)",
       "return (s.num_steps < jnp.minimum(max_iters, 10)) & (jnp.abs(s.loglik_change) > tol)",
       "EM/SQUAREM stops after at most 10 iterations whatever max_iters says",
       "tests/test_mutants.py", "tests/estimation/test_em.py"),
    _m("em_default_tol_loose", "em", "uldp_jax/estimation/_em_core.py",
       "DEFAULT_TOL = 1e-14", "DEFAULT_TOL = 1e-7",
       "the histogram EM's default tolerance loosened from 1e-14 to 1e-7 nats per report (stops short of the MLE)",
       "tests/test_mutants.py", "tests/estimation/test_em.py"),
    _m("em_report_tol_loose", "em", "uldp_jax/estimation/_em_core.py",
       "REPORT_TOL = 1e-12", "REPORT_TOL = 1e-6",
       "the per-report EM's default tolerance loosened from 1e-12 to 1e-6 nats per report",
       "tests/estimation/test_em_mle.py", "tests/estimation/test_em_newton.py"),
    _m("em_gain_drops_revive", "em", "uldp_jax/estimation/_em_passes.py",
       "revive = jnp.where(ds > 0, ds / jnp.maximum(t * total, jnp.finfo(den.dtype).tiny), 0.0)",
       "revive = jnp.zeros_like(ds)",
       "the precise gain drops the term of steps that revive items at 0 (the old bug: EM stopped short)",
       "tests/estimation/test_em_newton.py", "tests/estimation/test_em_large_eps.py"),
    # ---- count samplers
    _m("binomial_inversion_off_by_one", "counts", MECH + "core/_binomial.py",
       "        f = f * (n - (j - 1)) * (ratio / j)", "        f = f * (n - j) * (ratio / j)",
       "the binomial inversion's pmf recurrence uses n - j instead of n - j + 1 (biased small-mean cells)",
       "tests/mechanisms/core/test_counts.py"),
    _m("binomial_btrs_shift", "counts", MECH + "core/_binomial.py",
       "self.c = n * q + 0.5", "self.c = n * q + 1.5",
       "BTRS's centre moved by one (large-mean binomial draws biased by +1)",
       "tests/mechanisms/core/test_counts.py"),
    _m("independent_bits_one_short", "counts", MECH + "core/_counts.py",
       "jnp.concatenate([counts, jnp.sum(counts) - counts])",
       "jnp.concatenate([counts, jnp.sum(counts) - counts - 1])",
       "the bit count sampler draws the 'other' users' bits from one user too few (UE, uRAP counts path)",
       "tests/mechanisms/core/test_counts.py", "tests/engine/test_counts_path.py"),
    # ---- studies that mislabel rows
    _m("study_rows_points_reversed", "study", "uldp_jax/studies/_run.py",
       "_metrics.evaluate(mname, metric, est[method][i], target, where)",
       "_metrics.evaluate(mname, metric, est[method][-1 - i], target, where)",
       "a study row of grid point i holds the estimates of the mirrored point (rows mislabelled within a group)",
       "tests/studies/test_run.py"),
    _m("study_rows_first_n", "study", "uldp_jax/studies/_run.py",
       '"n": n, "sample": spec.sample,', '"n": spec.ns[0], "sample": spec.sample,',
       "every study row is labelled with the first n",
       "tests/studies/test_run.py"),
    # ---- ul.check rows skipped
    _m("check_sampler_skips_last_input", "check", "uldp_jax/checks/_sample.py",
       "for x in range(d):  # d chi-square tests", "for x in range(d - 1):  # d chi-square tests",
       "ul.check's sampler row never tests the last input's reports",
       "tests/test_check_mutants.py", "tests/test_check.py"),
    _m("check_debias_row_skipped", "check", "uldp_jax/_check.py",
       "debias_row = _estimator.check_debias(mech, Q, S)", 'debias_row = skip("debias", "not run")',
       "ul.check reports its debias row as skipped instead of running it",
       "tests/test_check_mutants.py", "tests/test_check.py"),
    _m("check_rank_row_skipped", "check", "uldp_jax/_check.py",
       "debias_row, _estimator.check_rank(mech, Q, S),", 'debias_row, skip("rank", "not run"),',
       "ul.check reports its rank row as skipped instead of running it",
       "tests/test_check_mutants.py", "tests/test_check.py"),
    # ---- validation that lets bad values through
    _m("eps_zero_accepted", "validation", "uldp_jax/_validate.py",
       "arr = as_param(name, value, lower=0.0)\n"
       "    if is_concrete(arr) and np.ndim(arr) > 1:\n"
       '        raise ValueError(f"Expected {name} to be a scalar or a 1-D grid of values, got shape '
       '{np.shape(arr)}.")\n'
       "    if is_concrete(arr) and (np.any(arr < EPS_MIN)",
       "arr = as_param(name, value, lower=0.0, lower_open=False)\n"
       "    if is_concrete(arr) and np.ndim(arr) > 1:\n"
       '        raise ValueError(f"Expected {name} to be a scalar or a 1-D grid of values, got shape '
       '{np.shape(arr)}.")\n'
       "    if is_concrete(arr) and (np.any((arr > 0) & (arr < EPS_MIN))",
       "check_eps writes its lower bound as eps >= 0: eps = 0 (no privacy budget) gets through",
       "tests/test_validate.py"),
    _m("index_set_admits_d", "validation", "uldp_jax/_validate.py",
       "if not 0 <= v < d:", "if not 0 <= v <= d:",
       "an index set (sensitive items) may hold item d, one past the domain",
       "tests/test_validate.py"),
    _m("items_admit_d", "validation", "uldp_jax/_validate.py",
       "if lo < 0 or hi >= d:", "if lo < 0 or hi > d:",
       "an item array (xs) may hold item d, one past the domain",
       "tests/test_validate.py"),
    # ---- theory
    _m("urr_nmse_theta_sign", "theory", MECH + "core/_nmse.py",
       "2.0 * (s - 1.0 + theta_n) * t / u", "2.0 * (s - 1.0 - theta_n) * t / u",
       "uRR's closed-form risk (001 Prop 15) with the sign of theta_N flipped",
       "tests/theory/test_closed_forms.py"),
    _m("uss_nmse_nonsensitive_k", "theory", MECH + "core/_nmse.py",
       "return first + second + theta_n * s * t / (k * u)", "return first + second + theta_n * s * t / u",
       "uSS's closed-form risk (003 eq 35) drops the 1/k of its non-sensitive term",
       "tests/theory/test_closed_forms.py"),
    _m("theory_iid_term_on_fixed", "theory", "uldp_jax/theory/_mse.py",
       'if model == "iid":\n        r = r + 1.0', 'if model == "fixed":\n        r = r + 1.0',
       "ul.theory.mse adds the iid model's sampling term 1 - sum p^2 to the fixed model instead",
       "tests/theory/test_closed_forms.py"),
    _m("item_variance_nonsensitive_iid", "theory", "uldp_jax/theory/_mse.py",
       "v_n = p * (1.0 - z * p) / z", "v_n = p * (1.0 - p) / z",
       "the iid variance of a non-sensitive item reads 1 - p for 1 - z* p (003 eq 21's iid form)",
       "tests/theory/test_closed_forms.py"),
    _m("murakami_urr_l2_sign", "theory", "uldp_jax/theory/_murakami.py",
       "(2.0 * up * (s - ps) + s * (s - 1.0))", "(2.0 * up * (s + ps) + s * (s - 1.0))",
       "001 eq 25 (uRR's expected l2^2) with the sensitive mass added instead of subtracted",
       "tests/theory/test_closed_forms.py::test_murakami_l2_and_l1_match_dispatch", "tests/theory/test_murakami.py"),
    # ---- post-processing
    _m("project_tau_off_by_one", "postprocess", "uldp_jax/estimation/_postprocess.py",
       "tau = jnp.take_along_axis(css, rho - 1, axis=-1)", "tau = jnp.take_along_axis(css, rho, axis=-1)",
       "the simplex projection reads its threshold one entry too far (Duchi et al.'s rho off by one)",
       "tests/estimation/test_postprocess.py"),
    _m("norm_sub_single_round", "postprocess", "uldp_jax/estimation/_postprocess.py",
       "new = mask & (shifted(mask) > 0)", "new = mask & (x > 0)",
       "Norm-Sub stops after one round: entries the common shift pushes below 0 stay negative",
       "tests/estimation/test_postprocess.py"),
    _m("ndss_norm_divisor", "postprocess", "uldp_jax/estimation/_postprocess_ndss.py",
       "keepdims=True)) / p_hat.shape[-1]", "keepdims=True)) / (p_hat.shape[-1] - 1)",
       "Norm spreads the missing mass over d - 1 items: the result no longer sums to 1",
       "tests/estimation/test_postprocess_ndss.py"),
    # ---- PUM
    _m("pum_case1_abs", "pum", "uldp_jax/pum/_estimate.py",
       "w = jnp.where(nonsens, jnp.maximum(rx, 0.0), 0.0)", "w = jnp.where(nonsens, jnp.abs(rx), 0.0)",
       "PUM's case (I) bot distribution weighs negative estimates by their size instead of dropping them",
       "tests/pum/test_estimate.py"),
    _m("pum_one_bot_for_every_tag", "pum", "uldp_jax/pum/_mechanism.py",
       "return jnp.where(jnp.any(match, axis=-1), d + tag, xs).astype(jnp.int32)",
       "return jnp.where(jnp.any(match, axis=-1), d + 0 * tag, xs).astype(jnp.int32)",
       "the PUM sampler's pre-processor maps every tag's personal items to bot_1",
       "tests/pum/test_audit.py", "tests/pum/test_mechanism.py"),
)

BY_NAME = {m.name: m for m in MUTANTS}


# ---------------------------------------------------------------------------------------------------------------
# --list and --verify: plain text reads, nothing imported


def verify(repo: Path = ROOT, mutants: tuple[Mutant, ...] = MUTANTS, homes: bool = True) -> list[str]:
    """Problems of ``mutants`` in the checkout ``repo`` (empty: every ``old`` occurs exactly once in its file,
    ``new`` differs from it, names are unique and, with ``homes``, every home path exists)."""
    problems, seen, texts = [], set(), {}
    for m in mutants:
        if m.name in seen:
            problems.append(f"{m.name}: duplicate name")
        seen.add(m.name)
        if m.old == m.new:
            problems.append(f"{m.name}: new equals old")
        if not m.home:
            problems.append(f"{m.name}: no home tests")
        for h in m.home if homes else ():
            if not (repo / h.split("::")[0]).exists():
                problems.append(f"{m.name}: home {h} does not exist")
        file = repo / m.path
        if m.path not in texts:
            texts[m.path] = file.read_text() if file.is_file() else None
        if texts[m.path] is None:
            problems.append(f"{m.name}: {m.path} does not exist")
            continue
        count = texts[m.path].count(m.old)
        if count != 1:
            problems.append(f"{m.name}: old snippet occurs {count} times in {m.path}, expected once")
    return problems


def print_list(mutants: tuple[Mutant, ...]) -> None:
    width = max(len(m.name) for m in mutants)
    for m in mutants:
        print(f"{m.name:<{width}}  {m.kind:<12}  {m.path}\n{'':<{width}}  {m.why}\n{'':<{width}}  home: "
              f"{' '.join(m.home)}")
    print(f"{len(mutants)} mutants")


# ---------------------------------------------------------------------------------------------------------------
# run: one throw-away copy per mutant


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def export(repo: Path, commit: str, dest: Path, paths: tuple[str, ...] = ()) -> None:
    """``git archive`` of ``commit`` (optionally only ``paths``) extracted into ``dest``: the committed tree, so the
    checkout's working files are never read or touched."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(["git", "-C", str(repo), "archive", "--format=tar", commit, *paths],
                               stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"git archive of {repo} at {commit} failed")


PYTEST_TABLE = re.compile(r"^\[tool\.pytest\.ini_options\]\n(?:(?!\[).*\n?)*", re.M)


def splice_pytest_table(target: Path, source: Path) -> None:
    """Replaces ``[tool.pytest.ini_options]`` of ``target``'s pyproject.toml by ``source``'s (the suite's own settings:
    addopts, markers), keeping the rest of ``target`` (the package's metadata)."""
    src = PYTEST_TABLE.search(source.read_text())
    text = target.read_text()
    if src is None:
        raise SystemExit(f"{source}: no [tool.pytest.ini_options] table")
    table = src.group(0).rstrip("\n") + "\n\n"
    if PYTEST_TABLE.search(text) is None:
        target.write_text(text.rstrip("\n") + "\n\n" + table)
    else:
        target.write_text(PYTEST_TABLE.sub(lambda _: table, text, count=1))


def make_pristine(args: argparse.Namespace, dest: Path) -> None:
    """The package of ``--repo`` with the tests (and pytest settings) of ``--tests-from``."""
    export(args.repo, args.commit, dest)
    if args.tests_from is not None:
        shutil.rmtree(dest / "tests")
        with tempfile.TemporaryDirectory(prefix="mut_tests_") as tmp:
            export(args.tests_from, args.tests_commit, Path(tmp), ("tests", "pyproject.toml"))
            shutil.copytree(Path(tmp) / "tests", dest / "tests")
            splice_pytest_table(dest / "pyproject.toml", Path(tmp) / "pyproject.toml")


def child_env(copy: Path) -> dict:
    env = dict(os.environ)
    # the copy first: the venv's editable install points at the checkout, but its finder comes after sys.path
    env["PYTHONPATH"] = os.pathsep.join([str(copy)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


IMPORT = "import uldp_jax; print(uldp_jax.__file__)"
# a mutant's copy is only located (not executed), so a mutant that breaks the import is a verdict, not an abort
LOCATE = "import importlib.util; print(importlib.util.find_spec('uldp_jax').origin)"


def check_import(copy: Path, code: str = IMPORT) -> None:
    """Fails loudly unless ``uldp_jax`` in the copy's environment is the copy's package (``code`` prints its file)."""
    out = subprocess.run([sys.executable, "-c", code], cwd=copy, env=child_env(copy), capture_output=True, text=True)
    got = Path(out.stdout.strip()).resolve() if out.returncode == 0 else None
    if got is None or copy.resolve() not in got.parents:
        raise SystemExit(f"import uldp_jax in {copy} loaded {got or out.stderr.strip()}, not the copy: every verdict "
                         "would be about another package. Check PYTHONPATH and the venv's install.")


FAILED = re.compile(r"^(?:FAILED|ERROR) (.+?)(?= - |$)", re.M)  # the summary's "FAILED <node id> - <message>"


def run_pytest(copy: Path, paths: list[str], extra: list[str], timeout: float, log: Path) -> tuple[object, float]:
    """``(exit code or "timeout", seconds)`` of pytest in ``copy``; its output goes to ``log``."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-p", "no:cacheprovider", *extra, *paths]
    t0 = time.perf_counter()
    with open(log, "w") as out:
        # a session of its own: a timeout ends pytest, its xdist workers and any subprocess they started
        proc = subprocess.Popen(cmd, cwd=copy, env=child_env(copy), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            code = "timeout"
    return code, time.perf_counter() - t0


# pytest-xdist ends an ``-x`` run at its first failure by interrupting the session: exit code 2, not 1
XDIST_EXITFIRST = re.compile(r"xdist\.dsession\.Interrupted: stopping after \d+ failures")


def verdict(code: object, out: str) -> str:
    """``killed`` (a test failed: exit code 1, or xdist's ``-x`` interrupt after a failure), ``survived`` (0),
    ``timeout``, else ``error`` (a collection error, an internal error, no tests)."""
    if code == "timeout":
        return "timeout"
    if code == 2 and XDIST_EXITFIRST.search(out) and FAILED.search(out):
        return "killed"
    return {0: "survived", 1: "killed"}.get(code, "error")


def tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_one(m: Mutant, pristine: Path, args: argparse.Namespace) -> dict:
    """Copies ``pristine``, applies ``m``, runs its home tests then the suite; the result record."""
    copy = Path(tempfile.mkdtemp(prefix=f"mut_{m.name}_", dir=args.workdir))
    try:
        shutil.copytree(pristine, copy, dirs_exist_ok=True, symlinks=True)
        file = copy / m.path
        text = file.read_text()
        if text.count(m.old) != 1:
            return {"name": m.name, "kind": m.kind, "path": m.path, "status": "error", "exit_code": None,
                    "seconds": 0.0, "first_failure": None, "tail": f"old snippet occurs {text.count(m.old)} times"}
        file.write_text(text.replace(m.old, m.new, 1))
        check_import(copy, LOCATE)
        # an older suite (--tests-from) may lack a home file: the run goes on without it, and says so
        home = [h for h in m.home if (copy / h.split("::")[0]).exists()]
        paths = home + ([] if args.home_only else ["tests"])
        if not paths:  # pytest without paths would run its testpaths: the whole suite, not the triage asked for
            return {"name": m.name, "kind": m.kind, "path": m.path, "status": "error", "exit_code": None,
                    "seconds": 0.0, "first_failure": None, "home_missing": list(m.home),
                    "tail": "--home-only and none of the home tests exist in this suite"}
        log = copy / "pytest.log"
        code, secs = run_pytest(copy, paths, args.extra, args.timeout, log)
        out = log.read_text(errors="replace")
        if args.logs is not None:
            args.logs.mkdir(parents=True, exist_ok=True)
            shutil.copy(log, args.logs / f"{m.name}.log")
        first = FAILED.search(out)
        status = verdict(code, out)
        rec = {"name": m.name, "kind": m.kind, "path": m.path, "status": status,
               "exit_code": None if code == "timeout" else code, "seconds": round(secs, 1),
               "first_failure": first.group(1) if first else None}
        if len(home) < len(m.home):
            rec["home_missing"] = [h for h in m.home if h not in home]
        if first:
            rec["killed_at_home"] = any(first.group(1).startswith(h.rstrip("/")) for h in m.home)
        if status != "killed":
            rec["tail"] = tail(out)
        return rec
    finally:
        if not args.keep:
            shutil.rmtree(copy, ignore_errors=True)


def baseline(pristine: Path, selected: list[Mutant], args: argparse.Namespace) -> dict:
    """The unmutated copy on the same command (the selected mutants' home tests, then the suite unless
    ``--home-only``): a failure here makes every "killed" verdict doubtful."""
    copy = Path(tempfile.mkdtemp(prefix="mut_baseline_", dir=args.workdir))
    try:
        shutil.copytree(pristine, copy, dirs_exist_ok=True, symlinks=True)
        check_import(copy, LOCATE)
        homes = [h for h in dict.fromkeys(h for m in selected for h in m.home) if (copy / h.split("::")[0]).exists()]
        if args.home_only and not homes:
            return {"status": "error", "exit_code": None, "seconds": 0.0, "first_failure": None,
                    "tail": "--home-only and none of the home tests exist in this suite"}
        log = copy / "pytest.log"
        code, secs = run_pytest(copy, homes + ([] if args.home_only else ["tests"]), args.extra, args.timeout, log)
        out = log.read_text(errors="replace")
        first = FAILED.search(out)
        status = {"survived": "passed", "killed": "failed"}.get(verdict(code, out), verdict(code, out))
        return {"status": status,
                "exit_code": None if code == "timeout" else code, "seconds": round(secs, 1),
                "first_failure": first.group(1) if first else None, "tail": tail(out, 8)}
    finally:
        if not args.keep:
            shutil.rmtree(copy, ignore_errors=True)


def write_json(path: Path, doc: dict) -> None:
    """Atomic rewrite (temporary file, then rename): a run killed mid-write leaves the previous version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)


def print_table(results: list[dict]) -> None:
    width = max([len(r["name"]) for r in results] + [6])
    print(f"\n{'mutant':<{width}}  {'status':<8}  {'seconds':>7}  first failure")
    for r in results:
        print(f"{r['name']:<{width}}  {r['status']:<8}  {r['seconds']:>7.1f}  {r.get('first_failure') or ''}")
    counts = {s: sum(r["status"] == s for r in results) for s in ("killed", "survived", "timeout", "error")}
    print(", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(results)}")


def select(only: str | None) -> list[Mutant]:
    if not only:
        return list(MUTANTS)
    names = [s.strip() for s in only.split(",") if s.strip()]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise SystemExit(f"unknown mutants: {', '.join(unknown)} (see --list)")
    return [BY_NAME[n] for n in names]


def run(args: argparse.Namespace) -> int:
    args.repo = args.repo.resolve()
    args.commit = git(args.repo, "rev-parse", f"{args.rev}^{{commit}}")  # fixed now: later commits do not leak in
    if args.tests_from is not None:
        args.tests_from = args.tests_from.resolve()
        args.tests_commit = git(args.tests_from, "rev-parse", f"{args.tests_rev}^{{commit}}")
    args.extra = shlex.split(args.pytest_args)
    selected = select(args.only)
    doc = {"repo": str(args.repo), "commit": args.commit,
           "tests_from": str(args.tests_from or args.repo),
           "tests_commit": args.tests_commit if args.tests_from is not None else args.commit,
           "command": "python -m pytest -x -p no:cacheprovider " + " ".join(args.extra)
                      + (" <home>" if args.home_only else " <home> tests"),
           "timeout_s": args.timeout, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "results": []}
    if args.resume and args.out.exists():
        old = json.loads(args.out.read_text())
        if (old.get("commit"), old.get("tests_commit")) != (doc["commit"], doc["tests_commit"]):
            raise SystemExit(f"--resume: {args.out} holds commits {old.get('commit')} / {old.get('tests_commit')}, "
                             f"not {doc['commit']} / {doc['tests_commit']}")
        old.setdefault("resumed", []).append({"at": doc["started"], "command": doc["command"],
                                              "timeout_s": doc["timeout_s"]})
        doc = old
    done = {r["name"] for r in doc["results"]}
    with tempfile.TemporaryDirectory(prefix="mut_pristine_", dir=args.workdir) as tmp:
        pristine = Path(tmp)
        make_pristine(args, pristine)
        check_import(pristine)  # the smoke step: the package pytest will import is the copy's, not the checkout's
        problems = verify(pristine, tuple(selected), homes=False)  # the commit is mutated, not the working tree
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 2
        if args.baseline:
            doc["baseline"] = baseline(pristine, selected, args)
            print(f"baseline: {doc['baseline']['status']} in {doc['baseline']['seconds']} s", flush=True)
            write_json(args.out, doc)
        for m in selected:
            if m.name in done:
                continue
            print(f"{m.name} ...", end=" ", flush=True)
            rec = run_one(m, pristine, args)
            print(f"{rec['status']} in {rec['seconds']} s {rec.get('first_failure') or ''}", flush=True)
            doc["results"].append(rec)
            write_json(args.out, doc)
    doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write_json(args.out, doc)
    print_table([r for r in doc["results"] if r["name"] in {m.name for m in selected}])
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", nargs="?", choices=["run"], help="run the mutants (else --list or --verify)")
    p.add_argument("--list", action="store_true", help="print the mutants")
    p.add_argument("--verify", action="store_true", help="check every snippet occurs once in --repo's working tree")
    p.add_argument("--repo", type=Path, default=ROOT, help="checkout whose package is mutated (default: this one)")
    p.add_argument("--rev", default="HEAD", help="commit of --repo to copy (default HEAD)")
    p.add_argument("--tests-from", type=Path, default=None, help="checkout whose tests/ and pytest settings run")
    p.add_argument("--tests-rev", default="HEAD", help="commit of --tests-from (default HEAD)")
    p.add_argument("--out", type=Path, help="results JSON, e.g. experiments/benchmarks/mutants_<label>.json")
    p.add_argument("--only", default=None, help="comma-separated mutant names")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per mutant before it is recorded 'timeout'")
    p.add_argument("--home-only", action="store_true", help="run only the home tests (a quick triage, not a verdict)")
    p.add_argument("--pytest-args", default="", help='extra pytest arguments, e.g. "-n 1"')
    p.add_argument("--baseline", action="store_true", help="first run the same command on the unmutated copy")
    p.add_argument("--resume", action="store_true", help="skip the mutants --out already holds")
    p.add_argument("--logs", type=Path, default=None, help="keep each mutant's pytest output in this directory")
    p.add_argument("--workdir", default=None, help="where the throw-away copies go (default: the system temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the copies (for debugging a verdict)")
    args = p.parse_args(argv)
    if args.list:
        print_list(tuple(select(args.only)))
        return 0
    if args.verify:
        problems = verify(args.repo.resolve(), tuple(select(args.only)))
        print("\n".join(problems) if problems else f"ok: {len(select(args.only))} mutants, each snippet once")
        return 1 if problems else 0
    if args.command != "run":
        p.error("give --list, --verify or run")
    if args.out is None:
        p.error("run needs --out FILE.json")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
