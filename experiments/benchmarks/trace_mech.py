"""Follows the ``mech`` argument of ``ul.simulate`` through the package (issue 25's measure of the layering).

Every call of a ``uldp_jax`` function that receives the mechanism (an argument that is a ``ul.Mechanism``) is
recorded with ``sys.setprofile`` while one ``ul.simulate`` runs (tracing included: the first call compiles). It
prints the files the mechanism enters, the number of such calls, and the calls *up* a layer: a function in layer
``A`` (``uldp_jax.<A>...``) calling one in layer ``B`` where ``B`` imports ``A`` (directly or not; the import
graph of ``tests/test_layering.py``), i.e. a return of control to a higher layer (a callback). Both paths:

    python experiments/benchmarks/trace_mech.py            # GRR(8, 1), p uniform, n = 1000, reps = 2
"""

from __future__ import annotations

import collections
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import uldp_jax as ul  # noqa: E402
from tests import test_layering as lay  # noqa: E402  (the import graph the layering test checks)

PKG = os.path.dirname(os.path.abspath(ul.__file__))


def _layer_graph() -> dict[str, set[str]]:
    """Layer -> the layers it imports, transitively."""
    direct = collections.defaultdict(set)
    for m, targets in lay.GRAPH.items():
        direct[lay._layer(m)].update(lay._layer(t) for t in targets if lay._layer(t) != lay._layer(m))
    closure = {}
    for a in list(direct):
        seen, stack = set(), [a]
        while stack:
            for b in direct.get(stack.pop(), ()):
                if b not in seen:
                    seen.add(b)
                    stack.append(b)
        closure[a] = seen
    return closure


def _module(code) -> str | None:
    path = os.path.abspath(code.co_filename)
    if not path.startswith(PKG + os.sep):
        return None
    rel = os.path.relpath(path, os.path.dirname(PKG))[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def trace(fn) -> tuple[collections.Counter, list]:
    files, up, imports = collections.Counter(), [], _layer_graph()

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = _module(frame.f_code)
        if callee is None:
            return
        args = [frame.f_locals.get(v) for v in frame.f_code.co_varnames[: frame.f_code.co_argcount]]
        if not any(isinstance(a, ul.Mechanism) for a in args):
            return
        files[os.path.relpath(frame.f_code.co_filename, os.path.dirname(PKG))] += 1
        caller = _module(frame.f_back.f_code) if frame.f_back is not None else None
        if caller is not None:
            a, b = lay._layer(caller), lay._layer(callee)
            if a != b and a in imports.get(b, set()):
                up.append(f"{caller}.{frame.f_back.f_code.co_name} -> {callee}.{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        jax.block_until_ready(fn())
    finally:
        sys.setprofile(None)
    return files, up


def main() -> int:
    mech, p = ul.GRR(8, 1.0), np.full(8, 1 / 8)
    for path in ("auto", "per_user"):
        files, up = trace(lambda: ul.simulate(jax.random.key(0), mech, p=p, n=1000, reps=2, path=path).estimates)
        print(f"path={path}: {sum(files.values())} calls with the mechanism in {len(files)} files; "
              f"{len(up)} calls up a layer")
        for f, c in sorted(files.items()):
            print(f"  {c:4d}  {f}")
        for u in sorted(set(up)):
            print("  up:", u)
    return 0


if __name__ == "__main__":
    sys.exit(main())
