"""A study's methods: one list for every mechanism and n, or a table per mechanism and per n (``ul.study``'s
``methods=``), checked against the estimation registry."""

from __future__ import annotations

from typing import Any

from uldp_jax.estimation import _registry


def _check_methods(methods: Any) -> tuple:
    if isinstance(methods, str):
        methods = (methods,)
    if not isinstance(methods, (list, tuple)) or not all(isinstance(m, str) for m in methods):
        raise TypeError(f"Expected methods={methods!r} to be a method name or a sequence of names.")
    if not methods or len(set(methods)) != len(methods):
        raise ValueError(f"Expected methods={methods!r} to name at least one method, each once.")
    known = _registry.method_names()
    for m in methods:
        if m not in known:
            raise ValueError(f"Expected every entry of methods in {known}, got {m!r}.")
    return tuple(methods)


def check_method_table(methods: Any, names: tuple, ns: tuple) -> tuple[tuple, dict]:
    """``(every method, {(name, n): methods})`` from one list for all, a dict ``{name: methods}`` or ``{name:
    {n: methods}}``, or a callable ``(name, n) -> methods``."""
    if callable(methods) and not isinstance(methods, (str, dict)):
        table = {}
        for name in names:
            for n in ns:
                try:
                    got = methods(name, n)
                except Exception as e:
                    raise type(e)(f"methods({name!r}, {n}) failed: {e}") from e
                table[(name, n)] = _check_methods(got)
    elif isinstance(methods, dict):
        missing = [nm for nm in names if nm not in methods]
        unknown = [k for k in methods if k not in names]
        if missing or unknown:
            raise ValueError(f"Expected methods={{name: ...}} to have one entry per mechanism {list(names)}, "
                             + (f"missing {missing}" if missing else f"got unknown {unknown}") + ".")
        table = {}
        for name, per in methods.items():
            if isinstance(per, dict):
                bad = [k for k in per if k not in ns]
                if bad or len(per) != len(ns):
                    raise ValueError(f"Expected methods[{name!r}] = {{n: methods}} with one entry per n in "
                                     f"{list(ns)}, got keys {list(per)}.")
                table.update({(name, n): _check_methods(per[n]) for n in ns})
            else:
                table.update({(name, n): _check_methods(per) for n in ns})
    else:
        one = _check_methods(methods)
        return one, {}
    order = []
    for ms in table.values():
        order += [m for m in ms if m not in order]
    return tuple(order), table
