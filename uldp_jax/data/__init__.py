"""Datasets: documented synthetic proxies of the papers' data and loaders for the real files."""

from uldp_jax.data._census import census003_proxy, census_proxy, census_sensitive
from uldp_jax.data._dataset import DataError, Dataset, rescale_sensitive_mass
from uldp_jax.data._grid import foursquare003_proxy, foursquare_proxy, gowalla_proxy, grid_blocks
from uldp_jax.data._loaders import load_census, load_drugs, load_foursquare, load_gowalla
from uldp_jax.data._pum_scenario import PUMScenario, pum_scenario
from uldp_jax.data._registry import dataset_names, describe_datasets, get_dataset
from uldp_jax.data._simple import (
    drug_proxy,
    geometric,
    index_blocks,
    log_grid,
    normal_proxy,
    random_sensitive,
    uniform,
    zipf,
)

__all__ = [
    "DataError",
    "Dataset",
    "PUMScenario",
    "census003_proxy",
    "census_proxy",
    "census_sensitive",
    "dataset_names",
    "describe_datasets",
    "drug_proxy",
    "foursquare003_proxy",
    "foursquare_proxy",
    "geometric",
    "get_dataset",
    "gowalla_proxy",
    "grid_blocks",
    "index_blocks",
    "load_census",
    "load_drugs",
    "load_foursquare",
    "load_gowalla",
    "log_grid",
    "normal_proxy",
    "pum_scenario",
    "random_sensitive",
    "rescale_sensitive_mass",
    "uniform",
    "zipf",
]
