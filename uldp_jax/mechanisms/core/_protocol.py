"""What ``Mechanism.__init_subclass__`` checks: the required members, class constants and members the protocol
has folded into a record (defining one would silently do nothing)."""

from __future__ import annotations

import dataclasses


# The members every mechanism declares (``Mechanism.__init_subclass__`` checks them), with what to write.
REQUIRED = {
    "d": "the input domain size: a field `d: int = ul.static_field()` or a property",
    "num_outputs": "the size of the report space: `@property def num_outputs(self) -> int` (or a static field)",
    "report_kind": 'a plain class constant, e.g. `report_kind = "item"` ("item", "bits", or your own name '
                   "with aggregate() and likelihood()'s index defined)",
    "perturb_batch": "`def perturb_batch(self, key, xs)`: all users' reports for `xs: int32[n]`",
    "privacy_spec": "`def privacy_spec(self)`: the guarantee, e.g. `ul.PrivacySpec.ldp(self.d, self.eps)`",
}
# Class constants read off the class: annotating one (``report_kind: str = "item"``) would make it a dataclass
# field, a pytree leaf and a constructor argument.
CLASS_CONSTANTS = ("report_kind", "_closed_form")


# Members folded into one record-returning member or into a function of the mechanism: a subclass that still
# defines one is refused (generic code would otherwise ignore it without a word), with what to write instead.
FOLDED = {
    "batch_shape": "ul.mechanisms.core.grid_shape(mech)",
    "validate_grid": "ul.mechanisms.core.validate_grid(mech, name)",
    "count_sampler": "counts()",
    "iid_count_sampler": "counts()",
    "count_draws": "counts()",
    "count_memory": "counts()",
    "channel_ops": "likelihood()",
    "product_likelihood": "likelihood()",
    "report_likelihood": "likelihood()",
    "report_index": "likelihood()",
    "channel_support": "likelihood()",
    "log_channel_matrix": "likelihood()",
    "num_inputs": "likelihood()",
    "num_stats": "reports()",
    "check_reports": "reports()",
    "comm_bits": "reports()",
    "sample_stats": "reports()",
    "debias": "estimator()",
}
_FOLDED_HOW = {
    "counts()": "`def counts(self)` returning `_records.counts_record(self, fixed, iid, draws=..., memory=...)` "
                "(uldp_jax.mechanisms.core._records; fixed(key, counts) and iid(key, n, p) are the exact samplers, "
                "draws(iid) and memory(iid) their cost; None: the per-user path)",
    "likelihood()": "`def likelihood(self)` returning `_records.Likelihood(ops=..., product=..., report=..., "
                    "index=..., support=..., log_channel=..., inputs=...)` (uldp_jax.mechanisms.core._records; "
                    "every field optional: ops = (matvec, rmatvec) for EM on item histograms, product = (mask, "
                    "invertible, log_odds), report(ys) = per-report factors, index(ys) = channel column of each report, support() = items "
                    "each column supports, log_channel() = (log Q, protected) computed without forming Q, inputs = "
                    "the channel's rows (default d); None: EM on the channel's columns)",
    "reports()": "`def reports(self)` returning `_records.Reports(stats=..., check=..., bits=..., sample=...)` "
                 "(uldp_jax.mechanisms.core._records; every field optional: stats = the length of aggregate's "
                 "statistic, check(ys) = raise TypeError/ValueError unless ys are your reports, bits = the bits a "
                 "user sends, sample(key, xs, weights) = aggregate(perturb_batch(key, xs), weights) drawn without "
                 "the reports; None: num_outputs (items) or d (bits), the item / bit forms or perturb_batch's "
                 "structure, log2(num_outputs), aggregate of the reports)",
    "estimator()": "`def estimator(self)` returning `_records.Estimator(debias=..., affine=..., variance=...)` "
                   "(uldp_jax.mechanisms.core._records; every field optional: debias(stats, n) = your own unbiased "
                   "estimate, affine = (a, b) with E[stats] / n = a p + b, variance(p, n) = its iid per-item "
                   "variance; _estimation.default_debias(self, stats, n) is the estimate without your own; None: "
                   "least squares on the channel)",
    "ul.mechanisms.core.grid_shape(mech)": "Delete it: the shape of a jax.vmap-built grid is the shape of the "
                                           "mechanism's eps leaf, read by ul.mechanisms.core.grid_shape(mech)",
    "ul.mechanisms.core.validate_grid(mech, name)": "Delete it: the range checks (eps, d, the constructor's own "
                                                    "checks re-run per grid point) are ul.mechanisms.core."
                                                    "validate_grid(mech, name); put your own checks in __post_init__",
}


def refuse_folded_members(cls: type, root: type) -> None:
    """Refuses a class that defines, or inherits from a mixin, a member folded into a record."""
    found = []
    for name in FOLDED:
        owner = next((b for b in cls.__mro__ if name in b.__dict__ and b not in (root, object)), None)
        if owner is not None:
            found.append(name if owner is cls else f"{name} (in {owner.__name__})")
    if found:
        targets = sorted({FOLDED[n.split()[0]] for n in found})
        records = [t for t in targets if t.endswith("()")]  # a record-returning member to write
        how = [f"Write {'; '.join(f'{t}: {_FOLDED_HOW[t]}' for t in records)}."] if records else []
        how += [f"{_FOLDED_HOW[t]}." for t in targets if t not in records]  # a function reads it: delete it
        raise TypeError(f"{cls.__name__} defines {', '.join(found)}, which ul.Mechanism no longer reads: "
                        f"{', '.join(targets)} replaces it. {' '.join(how)}")


def refuse_annotated_constants(cls: type) -> None:
    notes = cls.__dict__.get("__annotations__", {})
    for name in CLASS_CONSTANTS:
        if name in notes and "ClassVar" not in str(notes[name]):
            raise TypeError(
                f"{cls.__name__}: {name} is annotated ({name}: {notes[name]}), which makes it a dataclass field "
                f"and a pytree leaf; write it as a plain class constant without the annotation, e.g. "
                f"{name} = {getattr(cls, name, None)!r}.")


def _declares(cls: type, name: str, root: type) -> bool:
    """Whether ``cls`` or a base other than ``root`` (``Mechanism``) defines ``name`` (field, property, method,
    constant)."""
    if name in {f.name for f in dataclasses.fields(cls)}:
        return True
    for base in cls.__mro__:
        if base in (root, object):
            continue
        if name in base.__dict__:
            return name != "report_kind" or bool(base.__dict__[name])
    return False


def check_required(cls: type, root: type) -> None:
    missing = [name for name in REQUIRED if not _declares(cls, name, root)]
    if missing:
        lines = "; ".join(f"{name}: {REQUIRED[name]}" for name in missing)
        raise TypeError(f"{cls.__name__} subclasses ul.Mechanism but does not define {', '.join(missing)}. "
                        f"Write {lines}. (A shared base class: `class {cls.__name__}(ul.Mechanism, abstract=True)`.)")

