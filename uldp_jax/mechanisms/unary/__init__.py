"""Unary encoding: UE/RAPPOR/SUE/OUE, uRAP (001) and uUE (003)."""

from uldp_jax.mechanisms.unary._ue import OUE, RAPPOR, SUE, UE
from uldp_jax.mechanisms.unary._urap import URAP
from uldp_jax.mechanisms.unary._uue import UUE
