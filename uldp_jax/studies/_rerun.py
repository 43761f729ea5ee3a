"""``StudyResult.study_arguments``: the same study again (or extended) from what a saved study keeps.

A study file keeps the key's data, the grids, ``n``, ``reps``, the methods table, the built-in metrics, the
sampling model with ``p`` (or the population's SHA-256), and each factory's ``module:qualname`` and source text.
Code is never executed from a file: the caller passes the factories again (the stored source says what they
were), and anything to change (``n=[...]``, ``reps=``, ``eps=[...]``, more mechanisms).
"""

from __future__ import annotations

import hashlib
from typing import Any

import jax
import numpy as np


def study_arguments(config: dict, factories: dict, changes: dict) -> tuple[jax.Array, dict, dict]:
    """``(key, mechanisms, keyword arguments)`` of ``ul.study`` that reproduce ``config``, with ``changes``.

    Raises:
      ValueError: a stored callable metric, ``simulate_options`` or population that ``changes`` does not
        supply again, or population users whose hash differs from the stored one.
    """
    if not isinstance(factories, dict) or not factories:
        raise TypeError("Expected factories={name: factory} (the stored source: config['factories']).")
    changes = dict(changes)
    key = changes.pop("key", None)
    if key is None:
        key = jax.random.wrap_key_data(np.asarray(config["key_data"], np.uint32))
    kw: dict = dict(config["grids"])
    kw.update(n=None if config["sample"] == "fixed" else list(config["n"]), reps=config["reps"],
              sample=config["sample"])
    table = config.get("methods_by_mechanism")
    same = table is None or len({tuple(v) for per in table.values() for v in per.values()}) == 1
    kw["methods"] = list(config["methods"]) if same else {nm: {int(n): ms for n, ms in per.items()}
                                                          for nm, per in table.items()}
    callables = [k for k, m in config["metrics"].items() if m.startswith("callable:")]
    if callables and "metrics" not in changes:
        raise ValueError(f"The study's metrics {callables} are callables (not stored): pass metrics=... again.")
    kw["metrics"] = {k: m for k, m in config["metrics"].items()}
    if config.get("simulate_options") and "simulate_options" not in changes:
        raise ValueError(f"The study ran with simulate_options={config['simulate_options']} (stored as text): "
                         "pass simulate_options=... again.")
    if config["sample"] == "iid":
        p = config["p"]
        kw["p"] = (lambda d, table=p: np.asarray(table[str(d)])) if isinstance(p, dict) else np.asarray(p)
    elif "xs" not in changes:
        raise ValueError("The study's users are stored by hash only: pass xs=... again.")
    else:
        got = hashlib.sha256(np.ascontiguousarray(changes["xs"], np.int32).tobytes()).hexdigest()
        if got != config["xs_sha256"] and not changes.pop("new_users", False):
            raise ValueError("xs differs from the study's users (SHA-256); pass new_users=True to run on them.")
    changes.pop("new_users", None)
    kw.update(changes)
    return key, factories, kw
