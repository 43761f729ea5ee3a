"""Registry of estimation methods, shared by ``estimate`` and ``simulate``.

A method is a pure function. ``input="stats"`` methods take ``(mech, stats, n, **options)`` where ``stats`` is
the mechanism's aggregate (``int32[num_stats]``) and return ``float[d]``; they vmap over repetitions.
``input="reports"`` methods take ``(mech, reports, **options)`` (e.g. EM on exact per-report likelihoods).

What a reports method receives (the protocol for methods registered from outside the package):

* from ``ul.estimate(mech, ys, method)``: ``ys`` as the caller gave them (``ul.perturb``'s output);
* from ``ul.simulate(..., methods=(method,))``: each repetition's reports, regenerated with the engine's block
  layout (they aggregate to that repetition's ``stats``), in the form ``ul.perturb`` returns for the mechanism:
  ``ul.CompactBits`` when its compact sampler draws the statistics (``mech.compact().stats``), else what
  ``mech.perturb_batch`` returns (``int32[n]`` items, ``bool[n, m]`` bits, or the mechanism's report pytree such
  as ``HashReport``), leading axis ``n``; concrete arrays, one repetition per call. A grid's points are estimated
  one at a time, each with its own reports.

A method may declare ``forms``, the engine's compact device forms it also accepts (``"packed"``: bit-packed
reports, ``ul.estimation.PackedReports``; ``"support"``: support lists, ``ul.estimation.SupportReports``): the
engine then hands bit-vector reports in whichever of these is smallest, traced inside its compiled run. The
built-in "em" and "em-pure" declare both.
A method may also carry a ``resolver(mech) -> Method`` that picks the concrete form for a mechanism (e.g.
"em" works from stats for item-report mechanisms and from reports for bit-vector ones); ``get_method(name,
mech)`` applies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Method(NamedTuple):
    fn: Callable[..., Any]
    input: str  # "stats" or "reports"
    doc: str
    resolver: Callable[[Any], Method] | None = None  # per-mechanism concrete form (see get_method)
    forms: tuple[str, ...] = ()  # engine report forms fn accepts besides perturb's: "packed", "support"


_METHODS: dict[str, Method] = {}
FORMS = ("packed", "support")  # the engine's compact report forms a reports method may accept


def _builtin(method: Method) -> bool:
    """A method the package registers itself (its function lives in ``uldp_jax``)."""
    return str(getattr(method.fn, "__module__", "") or "").startswith("uldp_jax.")


def register_method(name: str, fn: Callable[..., Any], input: str = "stats", doc: str = "",
                    resolver: Callable[[Any], Method] | None = None, replace: bool = False,
                    forms: tuple[str, ...] = ()) -> None:
    """Adds an estimation method available to ``estimate`` and ``simulate``.

    ``resolver(mech)``, when given, returns the concrete ``Method`` (its ``fn`` and ``input``) to use for
    ``mech``; ``fn``/``input`` are then the defaults reported when no mechanism is known. ``forms``: the engine's
    compact report forms an ``input="reports"`` method also accepts (module docstring; default: none, the
    method gets reports in ``ul.perturb``'s form).

    Raises:
      TypeError: ``name`` is not a non-empty string, or ``fn``/``resolver`` is not callable.
      ValueError: ``name`` is already registered (pass ``replace=True`` to replace a method you registered;
        the package's own methods, e.g. "emp", "emp+thr", "em", cannot be replaced), or a bad ``input``.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"Expected name={name!r} to be a non-empty string.")
    if not callable(fn):
        raise TypeError(f"Expected fn={fn!r} to be callable (mech, stats, n, **options) -> float[d].")
    if resolver is not None and not callable(resolver):
        raise TypeError(f"Expected resolver={resolver!r} to be callable or None.")
    if input not in ("stats", "reports"):
        raise ValueError(f"Expected input={input!r} in ('stats', 'reports').")
    if not isinstance(replace, bool):
        raise TypeError(f"Expected replace={replace!r} to be True or False.")
    if not isinstance(forms, tuple) or not set(forms) <= set(FORMS):
        raise ValueError(f"Expected forms={forms!r} to be a tuple of {FORMS}.")
    old = _METHODS.get(name)
    if old is not None and _builtin(old) and not _builtin(Method(fn, input, doc)):
        raise ValueError(f"Estimation method {name!r} is built in and cannot be replaced; register yours under "
                         "another name.")
    if old is not None and not replace and not _builtin(old):
        raise ValueError(f"Estimation method {name!r} is already registered; pass replace=True to replace it.")
    _METHODS[name] = Method(fn, input, doc, resolver, forms)


def get_method(name: Any, mech: Any = None) -> Method:
    """The method registered as ``name``, resolved for ``mech`` when one is given."""
    if not isinstance(name, str) or name not in _METHODS:
        raise ValueError(f"Unknown estimation method={name!r}; known methods: {sorted(_METHODS)}.")
    m = _METHODS[name]
    if mech is not None and m.resolver is not None:
        return m.resolver(mech)
    return m


def method_names() -> tuple[str, ...]:
    return tuple(sorted(_METHODS))
