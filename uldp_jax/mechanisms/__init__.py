"""Mechanisms: each a pytree with a per-user sampler, an aggregate, and an exact channel."""

from uldp_jax.mechanisms._base import Mechanism, PrivacySpec, pytree_dataclass, replace, static_field
from uldp_jax.mechanisms._binary import BinaryCA, Mangat, Warner
from uldp_jax.mechanisms._block_hr import BlockHR
from uldp_jax.mechanisms._grr import GRR
from uldp_jax.mechanisms._highlow_hr import HighLowHR
from uldp_jax.mechanisms._hr import HR
from uldp_jax.mechanisms._general_hr import HadamardResponse
from uldp_jax.mechanisms._ue import OUE, RAPPOR, SUE, UE
from uldp_jax.mechanisms._urap import URAP
from uldp_jax.mechanisms._urr import URR
from uldp_jax.mechanisms._glutf import GLUTF, GLUTFReport, glutf
from uldp_jax.mechanisms._olh import OLH, HashReport
from uldp_jax.mechanisms._ss import SS
from uldp_jax.mechanisms._ulh import ULH
from uldp_jax.mechanisms._uss import USS
from uldp_jax.mechanisms._uue import UUE
from uldp_jax.mechanisms._uwheel import UWheel
from uldp_jax.mechanisms._wheel import Wheel, WheelReport
