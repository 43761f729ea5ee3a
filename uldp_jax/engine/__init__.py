"""The Monte Carlo engine: one package for every simulation path.

* ``_engine``: ``simulate`` / ``simulate_stats`` / ``SimResult`` (exposed as ``ul.simulate``, ...): inputs,
  path choice, sizes, the per-user and counts kernels and the estimates.
* ``_layout``: the block layout and key schedule (repetition ``r`` from ``fold_in(key, r)``, user block ``b``
  from ``fold_in(key_r, b)``) shared by every path, collaborative sampling and the experiments.
* ``_counts_path``: the exact count-level path (``ul.fastpath``).
* ``_reports``: report-based estimation (regenerates the reports behind the per-user path's statistics).
* ``_shard``: multi-device execution (``jax.shard_map``).

The sizing policy lives in ``uldp_jax._sizing`` (below estimation, whose EM passes read it).

``ul.simulate`` is the function; this package is ``uldp_jax.engine``, a name no function shadows (until issue 47 it
was ``uldp_jax.simulate``, which ``ul.simulate`` hid).
"""

from uldp_jax.engine import _counts_path, _engine, _layout, _reports, _shard
from uldp_jax.engine._engine import SimResult, simulate, simulate_stats

__all__ = ["SimResult", "simulate", "simulate_stats"]
