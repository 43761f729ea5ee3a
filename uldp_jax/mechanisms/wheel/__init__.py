"""The Wheel mechanism and uWheel (003)."""

from uldp_jax.mechanisms.wheel._uwheel import UWheel
from uldp_jax.mechanisms.wheel._wheel import Wheel, WheelReport
