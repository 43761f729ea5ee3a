"""Named datasets: ``get_dataset(name, path=None)`` returns the real data when ``path`` is given, else the proxy."""

from __future__ import annotations

from typing import Any, Callable

from uldp_jax.data import _census, _grid, _loaders, _simple
from uldp_jax.data._dataset import DataError, Dataset

# name -> (proxy factory, loader or None, one-line description)
_DATASETS: dict[str, tuple[Callable[..., Dataset], Any, str]] = {
    "foursquare": (_grid.foursquare_proxy, _loaders.load_foursquare, "001 Manhattan 25x25 grid, s=15 (hospitals)"),
    "foursquare25": (_grid.foursquare003_proxy,
                     lambda path: _loaders.load_foursquare(path, categories=("Hospital", "Casino", "Strip Club"),
                                                           name="foursquare25"),
                     "003 Manhattan 25x25 grid, s=25 (hospitals, casinos, strip clubs)"),
    "census": (_census.census_proxy, _loaders.load_census, "001 US Census age x income x marital x sex, d=400, s=76"),
    "census1200": (_census.census003_proxy, lambda path: _loaders.load_census(path, disability=True),
                   "003 US Census with disability, d=1200, s=424"),
    "drug": (_simple.drug_proxy, _loaders.load_drugs, "003 drugs.com ratings, d=10, s=3"),
    "normal": (_simple.normal_proxy, None, "003 discretised normal, d=1000, s=230 (synthetic in the paper too)"),
    "gowalla": (_grid.gowalla_proxy, _loaders.load_gowalla, "004 Gowalla 0.2-degree US grid, d=43,750"),
}
for _k in range(1, 6):
    _DATASETS[f"census{4 + _k}"] = (
        (lambda k: lambda: _census.census_proxy(num_military=k, n=240_000))(_k),
        (lambda k: lambda path: _loaders.load_census(path, num_military=k).with_n(240_000))(_k),
        f"001 Fig 7 census with {4 + _k} attributes, d={400 * 2**_k}")


def dataset_names() -> tuple[str, ...]:
    return tuple(sorted(_DATASETS))


def describe_datasets() -> dict[str, str]:
    return {k: v[2] for k, v in sorted(_DATASETS.items())}


def get_dataset(name: str, path: str | None = None) -> Dataset:
    """The named dataset: loaded from ``path`` (real data, the paper's preprocessing) or its synthetic proxy.

    Raises:
      ValueError: unknown ``name``.
      DataError: ``path`` does not exist or is not in the expected format, or is given for a dataset that is
        synthetic in the paper.
    """
    if name not in _DATASETS:
        raise ValueError(f"Unknown dataset name={name!r}; known: {', '.join(dataset_names())}.")
    proxy, loader, _ = _DATASETS[name]
    if path is None:
        return proxy()
    if loader is None:
        raise DataError(f"Dataset {name!r} is synthetic in the paper; it takes no data path.")
    return loader(path)
