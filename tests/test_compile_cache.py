"""The persistent compilation cache (issue 20 item 4): on by default, a second process compiles nothing.

Each check runs in fresh subprocesses with their own cache directory (the suite itself runs with the cache off,
tests/conftest.py). JAX records a compile request that may use the cache and, on a hit, a cache hit: a process
whose requests are all hits compiled nothing.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import pytest

import uldp_jax as ul
from uldp_jax import _cache

ROOT = Path(ul.__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import collections, json, sys
    import jax
    events = collections.Counter()
    jax.monitoring.register_event_listener(lambda e, **kw: events.update([e]))
    import numpy as np
    import uldp_jax as ul
    res = ul.simulate(jax.random.key(0), ul.GRR(6, 1.0), p=np.full(6, 1 / 6), n=300, reps=2, path="per_user")
    print(json.dumps(dict(dir=jax.config.jax_compilation_cache_dir,
                          requests=events["/jax/compilation_cache/compile_requests_use_cache"],
                          hits=events["/jax/compilation_cache/cache_hits"],
                          stats=np.asarray(res.stats).tolist())))
""")


def _run(env_extra: dict, tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ULDP_JAX_CACHE", "ULDP_JAX_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update({"PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "xdg"), **env_extra})
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_second_process_compiles_nothing(tmp_path):
    first = _run({}, tmp_path)  # the default: on, under $XDG_CACHE_HOME/uldp_jax/jax
    assert first["dir"] == str(tmp_path / "xdg" / "uldp_jax" / "jax")
    assert first["requests"] > first["hits"]  # it compiled and wrote the kernels
    second = _run({}, tmp_path)
    assert second["requests"] > 0 and second["hits"] == second["requests"]  # every program came from the cache
    assert second["stats"] == first["stats"]


@pytest.mark.slow
def test_switched_off_and_a_users_own_cache_dir_is_kept(tmp_path):
    off = _run({"ULDP_JAX_CACHE": "0"}, tmp_path)
    assert off["dir"] is None and off["hits"] == 0
    assert not (tmp_path / "xdg").exists()
    own = _run({"JAX_COMPILATION_CACHE_DIR": str(tmp_path / "mine"), "ULDP_JAX_CACHE_DIR": str(tmp_path / "x")},
               tmp_path)
    assert own["dir"] == str(tmp_path / "mine") and not (tmp_path / "x").exists()


def test_enable_and_disable_in_process(tmp_path, monkeypatch):
    assert jax.config.jax_compilation_cache_dir is None  # the suite runs with the cache off (conftest)
    monkeypatch.setenv("ULDP_JAX_CACHE_DIR", str(tmp_path / "env"))
    assert _cache.cache_dir() == str(tmp_path / "env")
    try:
        assert ul.enable_compilation_cache(tmp_path / "c") == str(tmp_path / "c")
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "c")
        assert jax.config.jax_persistent_cache_min_compile_time_secs == 0.0
    finally:
        ul.disable_compilation_cache()
    assert jax.config.jax_compilation_cache_dir is None
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 1.0
    with pytest.raises(TypeError, match="path"):
        ul.enable_compilation_cache(3)
