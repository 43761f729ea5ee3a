"""``uldp_jax/mechanisms/subset/_projective.py``: the points of the projective space as integers round-trip, match
minilek/private_frequency_oracles' indexing (tests/mechanisms/subset/minilek_pgr.py, a port), and each point's
hyperplane holds distinct points orthogonal to it mod q."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.subset import _projective as pg

from tests.mechanisms.subset import minilek_pgr as ref


def test_points_round_trip_and_hyperplanes():
    q, t = 5, 4
    K = pg.num_points(q, t)
    j = jnp.arange(K, dtype=jnp.int32)
    v = pg.index_to_vec(j, q, t)
    np.testing.assert_array_equal(np.asarray(pg.vec_to_index(v, q, t)), np.arange(K))
    np.testing.assert_array_equal(np.asarray(v[:40]), np.array([ref.index_to_vec(i, t, q) for i in range(40)]))
    planes = np.asarray(pg.hyperplane(v[:20], q, t, jnp.asarray(pg.inverse_table(q)),
                                      jnp.asarray(pg.placed_index_table(q, t))))  # [20, cset]
    assert planes.shape == (20, pg.num_points(q, t - 1))
    for i in range(20):
        assert len(set(planes[i])) == planes.shape[1]  # distinct points
        assert all(sum(a * b for a, b in zip(ref.index_to_vec(int(u), t, q), ref.index_to_vec(i, t, q))) % q == 0
                   for u in planes[i])
