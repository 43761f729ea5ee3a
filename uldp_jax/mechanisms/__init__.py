"""Mechanisms: each a pytree with a per-user sampler, an aggregate, and an exact channel.

``core/`` holds the protocol and shared helpers; each other subpackage is one family.
"""

from uldp_jax.mechanisms.core._base import Mechanism
from uldp_jax.mechanisms.core._pytree import pytree_dataclass, replace, static_field
from uldp_jax.mechanisms.core._spec import PrivacySpec
from uldp_jax.mechanisms.core._registry import examples
from uldp_jax.mechanisms.binary import BinaryCA, Mangat, Warner
from uldp_jax.mechanisms.hadamard import HR, BlockHR, HadamardResponse, HighLowHR
from uldp_jax.mechanisms.rr import GRR, URR
from uldp_jax.mechanisms.unary import OUE, RAPPOR, SUE, UE, URAP, UUE
from uldp_jax.mechanisms.transform import GLUTF, GLUTFReport, glutf
from uldp_jax.mechanisms.hashing import OLH, ULH, HashReport
from uldp_jax.mechanisms.subset import SS, USS
from uldp_jax.mechanisms.wheel import UWheel, Wheel, WheelReport
