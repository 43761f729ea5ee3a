"""JAX's persistent compilation cache for the toolkit's kernels: on by default, in a user cache directory.

Compiling the engine's kernels costs seconds per process (most of a first call); with the cache on, a second
process running the same call loads the compiled kernels from disk instead. The first use of a public name
(``ul.simulate``, ``ul.GRR``, ...; ``uldp_jax/_public.py``) turns the cache on in ``cache_dir()``:

* ``$ULDP_JAX_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/uldp_jax/jax``, else ``~/.cache/uldp_jax/jax``;
* ``ULDP_JAX_CACHE=0`` (or ``false``/``off``/``no``) in the environment leaves it off, and
  ``ul.disable_compilation_cache()`` turns it off in a running process;
* a cache directory you configured in JAX yourself (``jax.config.update("jax_compilation_cache_dir", ...)`` or
  ``JAX_COMPILATION_CACHE_DIR``) is never overridden, nor is a minimum compile time you set.

JAX's cache is process-wide: with uldp_jax's default on, the process's other jitted programs are cached there too.
While uldp_jax owns the cache it caches every program (``jax_persistent_cache_min_compile_time_secs = 0``, unless
you set that option): the engine's kernels and the many small programs of a first call each compile in well under
JAX's default threshold of one second. Results never depend on the cache (XLA's executables are deterministic).
"""

from __future__ import annotations

import gc
import os
import warnings

import jax
from jax.experimental.compilation_cache import compilation_cache as _jax_cache

ENV_SWITCH = "ULDP_JAX_CACHE"
ENV_DIR = "ULDP_JAX_CACHE_DIR"
_OFF = ("0", "false", "off", "no")
_OWNED: dict = {"dir": None, "min_time": None}  # what uldp_jax set (so it never touches the user's settings)


def cache_dir() -> str:
    """The directory uldp_jax uses for the cache: ``$ULDP_JAX_CACHE_DIR``, else under ``$XDG_CACHE_HOME`` or
    ``~/.cache``: ``.../uldp_jax/jax``."""
    if os.environ.get(ENV_DIR):
        return os.path.abspath(os.path.expanduser(os.environ[ENV_DIR]))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "uldp_jax", "jax")


def enable_compilation_cache(path: str | os.PathLike | None = None) -> str | None:
    """Turns JAX's persistent compilation cache on in ``path`` (default ``cache_dir()``).

    A cache directory configured in JAX by someone else is kept (and returned). Returns the directory in use, or
    ``None`` when ``path`` cannot be created (the cache then stays off).

    Raises:
      TypeError: ``path`` is not a path.
    """
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"Expected path={path!r} to be a directory path or None.")
    current = jax.config.jax_compilation_cache_dir
    if current and current != _OWNED["dir"]:
        return current  # the user's own cache: never overridden
    target = os.path.abspath(os.path.expanduser(os.fspath(path))) if path is not None else cache_dir()
    try:
        os.makedirs(target, exist_ok=True)
    except OSError:
        return None
    if current != target:
        jax.config.update("jax_compilation_cache_dir", target)
        _jax_cache.reset_cache()  # re-initialised on the next compile, in the new directory
    _OWNED["dir"] = target
    if jax.config.jax_persistent_cache_min_compile_time_secs == 1.0 and _OWNED["min_time"] is None:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # JAX's default (1 s) left as set
        _OWNED["min_time"] = 1.0
    return target


def disable_compilation_cache() -> None:
    """Turns off the cache that uldp_jax turned on (a cache configured in JAX by someone else is left alone)."""
    if _OWNED["dir"] is None or jax.config.jax_compilation_cache_dir != _OWNED["dir"]:
        _OWNED["dir"] = None
        return
    jax.config.update("jax_compilation_cache_dir", None)
    if _OWNED["min_time"] is not None and jax.config.jax_persistent_cache_min_compile_time_secs == 0.0:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", _OWNED["min_time"])
    _OWNED["dir"] = _OWNED["min_time"] = None
    _jax_cache.reset_cache()


def configure_from_env() -> str | None:
    """At import: ``enable_compilation_cache()`` unless ``ULDP_JAX_CACHE`` says off. Returns the directory."""
    if os.environ.get(ENV_SWITCH, "1").strip().lower() in _OFF:
        return None
    return enable_compilation_cache()


# --- Compiled programs held in memory: a guard for long-lived processes -------------------------------------------
# Every XLA CPU executable a process keeps holds tens of memory mappings (about 420 for one ``ul.simulate`` call on a
# new shape) and JAX keeps every executable it compiled or loaded. A long-lived process (a notebook sweeping many
# shapes, a test worker) then reaches the kernel's ``vm.max_map_count`` (65530 by default on Linux) after ~150 new
# shapes, and the next compilation dies natively (LLVM "Cannot allocate memory", then SIGSEGV). ``guard_map_limit``
# runs at the engine's entry points: after a compilation or a cache load happened, it reads the process's mapping
# count, and past ``MAPS_FRACTION`` of the limit it calls ``jax.clear_caches()`` (later calls recompile what they need,
# or load it from the persistent cache; results never depend on it) and warns once.
MAPS_FRACTION = 0.5
_MAPS: dict = {"programs": 0, "checked": -1, "registered": False, "warned": False, "clears": 0}


def _count_program(event: str, *args, **kw) -> None:
    if event in ("/jax/core/compile/backend_compile_duration", "/jax/compilation_cache/cache_hits"):
        _MAPS["programs"] += 1


def map_counts() -> tuple[int, int] | None:
    """(memory mappings of this process, the kernel's ``vm.max_map_count``), or ``None`` where ``/proc`` does not say
    (not Linux)."""
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            limit = int(f.read())
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f), limit
    except (OSError, ValueError):
        return None


def guard_map_limit(fraction: float = MAPS_FRACTION, *, force: bool = False) -> bool:
    """Frees JAX's compiled programs when this process holds more than ``fraction`` of ``vm.max_map_count``.

    Cheap when nothing was compiled since the last check (no ``/proc`` read). Returns whether it freed them.
    """
    if not _MAPS["registered"]:
        jax.monitoring.register_event_duration_secs_listener(_count_program)
        jax.monitoring.register_event_listener(_count_program)
        _MAPS["registered"] = True
    if not force and _MAPS["programs"] == _MAPS["checked"]:
        return False
    _MAPS["checked"] = _MAPS["programs"]
    counts = map_counts()
    if counts is None or counts[0] <= fraction * counts[1]:
        return False
    jax.clear_caches()
    gc.collect()
    _MAPS["clears"] += 1
    if not _MAPS["warned"]:
        warnings.warn(f"uldp_jax: this process held {counts[0]} memory mappings, over {fraction:g} of the kernel's "
                      f"vm.max_map_count={counts[1]} (compiled programs are never freed by JAX); jax.clear_caches() "
                      "was called so the next compilation does not crash. Later calls recompile (or load from the "
                      "compilation cache) what they need.", RuntimeWarning, stacklevel=3)
        _MAPS["warned"] = True
    return True
