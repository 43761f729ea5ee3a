"""Building the compact per-user personal arrays of a PUM from (user, item, tag) triples (host-side)."""

from __future__ import annotations

from typing import Any

import numpy as np

from uldp_jax import _validate


def personal_from_pairs(n: Any, users: Any, items: Any, tags: Any, num_tags: Any) -> np.ndarray:
    """Builds the compact ``int32[n, num_tags, r]`` personal array from ``(user, item, tag)`` triples (host-side).

    ``r`` is the largest number of items one user lists under one tag; empty slots are ``-1``.

    Raises:
      ValueError: a user outside ``[0, n)``, a negative item, or a tag index outside ``[0, num_tags)``.
    """
    n = _validate.check_int("n", n, minimum=1)
    num_tags = _validate.check_int("num_tags", num_tags, minimum=1)
    users, items, tags = (np.asarray(a).ravel() for a in (users, items, tags))
    if not users.shape == items.shape == tags.shape:
        raise ValueError(f"Expected users, items, tags of equal length, got {users.shape}, {items.shape}, "
                         f"{tags.shape}.")
    for name, arr in (("users", users), ("items", items), ("tags", tags)):
        if arr.size and np.dtype(arr.dtype).kind not in "iu":
            raise TypeError(f"Expected {name} to hold integers, got dtype {arr.dtype}.")
    if users.size and (users.min() < 0 or users.max() >= n):
        raise ValueError(f"Expected every entry of users in [0, {n}), got {users[(users < 0) | (users >= n)][0]}.")
    if tags.size and (tags.min() < 0 or tags.max() >= num_tags):
        raise ValueError(f"Expected every tag index in [0, num_tags={num_tags}), got "
                         f"{tags[(tags < 0) | (tags >= num_tags)][0]}.")
    if items.size and items.min() < 0:
        raise ValueError(f"Expected items >= 0, got {items.min()}.")
    group = users.astype(np.int64) * num_tags + tags
    order = np.argsort(group, kind="stable")
    g = group[order]
    start = np.searchsorted(g, g, side="left")
    rank = np.arange(g.size) - start
    r = int(rank.max()) + 1 if g.size else 1
    out = np.full((n * num_tags, r), -1, np.int32)
    out[g, rank] = items[order]
    return out.reshape(n, num_tags, r)
