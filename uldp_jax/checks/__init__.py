"""``ul.check``'s rows, one module per kind of check (``uldp_jax._check`` runs them in order)."""

from uldp_jax.checks._report import CheckReport, CheckRow

__all__ = ["CheckReport", "CheckRow"]
