"""Session-wide test set-up: a throw-away persistent XLA compilation cache for one test run.

Most of the suite's time is XLA compilation. Within one run the same programs are compiled again and again: by
both pytest-xdist workers, by the subprocesses some tests start (CLI, notebooks, sharding), and by fresh ``jit``
objects that trace to the same program. A persistent compilation cache in a temporary folder lets each program be
compiled once per run. The folder is created by the controlling pytest process, handed to workers and
subprocesses through ``JAX_COMPILATION_CACHE_DIR`` (inherited environment), and deleted when the run ends; nothing
is written to the repository or the user's own cache, and the variable is removed again afterwards.

A user who already sets ``JAX_COMPILATION_CACHE_DIR`` keeps their cache; ``ULDP_JAX_TEST_XLA_CACHE=0`` turns
this off.
"""

import os
import shutil
import sys
import tempfile

_DIR = "JAX_COMPILATION_CACHE_DIR"
# Cache every program, including the many small eager-op kernels (JAX's default keeps only those >= 1 s).
_MIN_TIME = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"
_OWNED = []  # (name, previous value) of every variable this process set


def _set(name, value):
    _OWNED.append((name, os.environ.get(name)))
    os.environ[name] = value


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has set the environment
        return
    if os.environ.get(_DIR) or os.environ.get("ULDP_JAX_TEST_XLA_CACHE", "1") == "0":
        return
    path = tempfile.mkdtemp(prefix="uldp_jax_test_xla_cache_")
    config._uldp_xla_cache_dir = path
    _set(_DIR, path)
    if _MIN_TIME not in os.environ:
        _set(_MIN_TIME, "0")
    if "jax" in sys.modules:  # imported before this hook (e.g. by a plugin): its config already read the env
        import jax

        jax.config.update("jax_compilation_cache_dir", path)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", float(os.environ[_MIN_TIME]))


def pytest_unconfigure(config):
    path = getattr(config, "_uldp_xla_cache_dir", None)
    if path is None:
        return
    for name, old in reversed(_OWNED):
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
    _OWNED.clear()
    shutil.rmtree(path, ignore_errors=True)
