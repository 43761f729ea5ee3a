"""Monte Carlo studies as data: ``study`` runs mechanisms x grids x n x methods x metrics; ``StudyResult``."""

from uldp_jax.studies._result import StudyResult
from uldp_jax.studies._run import study

__all__ = ["StudyResult", "study"]
