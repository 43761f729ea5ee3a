"""Hadamard response: HR, HighLowHR, BlockHR (004) and the general HadamardResponse."""

from uldp_jax.mechanisms.hadamard._block_hr import BlockHR
from uldp_jax.mechanisms.hadamard._general_hr import HadamardResponse
from uldp_jax.mechanisms.hadamard._highlow_hr import HighLowHR
from uldp_jax.mechanisms.hadamard._hr import HR
