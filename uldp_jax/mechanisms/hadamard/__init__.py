"""Hadamard response: HR, HighLowHR, BlockHR (004), the general HadamardResponse, the one-bit Hadamard mechanism HM
and recursive Hadamard response RHR."""

from uldp_jax.mechanisms.hadamard._block_hr import BlockHR as BlockHR
from uldp_jax.mechanisms.hadamard._general_hr import HadamardResponse as HadamardResponse
from uldp_jax.mechanisms.hadamard._highlow_hr import HighLowHR as HighLowHR
from uldp_jax.mechanisms.hadamard._hr import HR as HR
from uldp_jax.mechanisms.hadamard._hm import HM as HM
from uldp_jax.mechanisms.hadamard._rhr import RHR as RHR
from uldp_jax.mechanisms.hadamard._rhr import rhr_item_nvar  # noqa: F401  (ul.theory's public name)
from uldp_jax.mechanisms.core._registry import register

register(HR, lambda e: HR(5, e))
register(HadamardResponse, lambda e: HadamardResponse(5, e, num_blocks=2))
register(HighLowHR, lambda e: HighLowHR(6, (1, 4), e))
register(BlockHR, lambda e: BlockHR([range(3), range(3, 5)], e))
register(HM, lambda e: HM(5, e))
register(RHR, lambda e: RHR(6, e, b=2))

__all__ = [
    "BlockHR", "HM", "HR", "HadamardResponse", "HighLowHR", "RHR",
]
