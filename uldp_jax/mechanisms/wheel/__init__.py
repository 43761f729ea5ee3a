"""The Wheel mechanism and uWheel (003)."""

from uldp_jax.mechanisms.wheel._uwheel import UWheel as UWheel
from uldp_jax.mechanisms.wheel._wheel import Wheel as Wheel, WheelReport
from uldp_jax.mechanisms.core._registry import register

register(Wheel, lambda e: Wheel(4, e, l=0.3, num_hashes=64))
register(UWheel, lambda e: UWheel(5, (0, 2, 3), e, l=0.3, num_hashes=64))

__all__ = ["UWheel", "Wheel"]  # the registered constructors (what ``from ... import *`` and type checkers see)
