"""uldp_jax: utility-optimized and context-aware local differential privacy in JAX.

The public names live in ``uldp_jax._public`` and are bound here on the first use of any of them (PEP 562), so that
importing the package, or its command line for ``uldp --help``/``--version``, does not import JAX.
"""

import sys as _sys
import typing as _typing

from uldp_jax._version import __version__

_loading = False  # while ``_public`` imports the layers: their ``from uldp_jax import <submodule>`` must not recurse


def _load() -> None:
    global _loading
    _loading = True
    try:
        from uldp_jax import _public  # the one deferred import: everything public, in one place
    finally:
        _loading = False
    globals().update({name: getattr(_public, name) for name in _public.__all__})
    globals()["__all__"] = list(_public.__all__)


def _asked_by_the_import_system() -> bool:
    caller = _sys._getframe(2)  # 0: this function, 1: __getattr__, 2: whoever read the attribute
    return caller.f_code.co_filename.startswith("<frozen importlib")


def __getattr__(name: str):
    # A private or dunder name, any name while ``_public`` is loading, and any name the import system asks for
    # (``from uldp_jax import cli``, or ``testing`` inside a module that ``_public`` may be importing) is not bound
    # here: the import system then imports the submodule of that name itself, or, for a public function, reads the
    # attribute again from the importing code, which loads the public names.
    if _loading or name.startswith("_") and name != "__all__" or _asked_by_the_import_system():
        raise AttributeError(f"module 'uldp_jax' has no attribute {name!r}")
    _load()
    try:
        return globals()[name]
    except KeyError:
        raise AttributeError(f"module 'uldp_jax' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    _load()
    return sorted(set(globals()) | set(globals()["__all__"]))


if _typing.TYPE_CHECKING:  # what type checkers and IDEs see: every public name, as if imported eagerly
    from uldp_jax._public import *  # noqa: F403
    from uldp_jax.mechanisms.binary import *  # noqa: F403
    from uldp_jax.mechanisms.hadamard import *  # noqa: F403
    from uldp_jax.mechanisms.hashing import *  # noqa: F403
    from uldp_jax.mechanisms.rr import *  # noqa: F403
    from uldp_jax.mechanisms.subset import *  # noqa: F403
    from uldp_jax.mechanisms.transform import *  # noqa: F403
    from uldp_jax.mechanisms.unary import *  # noqa: F403
    from uldp_jax.mechanisms.wheel import *  # noqa: F403
    from uldp_jax.pum import *  # noqa: F403
