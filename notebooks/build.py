"""Writes every notebook from make_notebooks.py and executes it top to bottom with nbclient, saving the outputs.

    python notebooks/build.py                 # reduced sizes (SMALL=1), the committed outputs
    python notebooks/build.py --full          # the notebooks' full sizes
    python notebooks/build.py quickstart.ipynb --timeout 1200

Each notebook runs in a fresh kernel in a temporary folder (its files, e.g. results/, are thrown away); the kernel
sees this process's environment (CPU unless JAX finds a GPU; ``ULDP_PROGRESS=0`` unless set, so the outputs carry
no progress bars). The run is recorded in the notebook's metadata (``uldp_build``: mode, JAX backend, cores, date,
seconds, the 1-minute load average before and after), and the install cell prints the mode and devices.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_notebooks  # noqa: E402


def build(name: str, small: bool = True, timeout: int = 1200, out_dir: str = HERE) -> float:
    """Executes notebook ``name`` (a key of ``make_notebooks.NOTEBOOKS``) and writes it with outputs; returns s."""
    nb = nbformat.reads(json.dumps(make_notebooks.notebook(make_notebooks.NOTEBOOKS[name], name)), as_version=4)
    os.environ["SMALL"] = "1" if small else "0"
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # figures embedded in the outputs
    os.environ.setdefault("ULDP_PROGRESS", "0")  # the committed outputs carry results, not progress bars
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": work}}).execute()
    seconds = time.perf_counter() - t0
    import jax

    nb.metadata["uldp_build"] = {
        "mode": "reduced (SMALL=1)" if small else "full", "backend": jax.default_backend(),
        "cores": os.cpu_count(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": round(seconds, 1), "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "by": "notebooks/build.py"}
    nbformat.write(nb, os.path.join(out_dir, name))
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="notebooks to build (default: all)")
    ap.add_argument("--full", action="store_true", help="full sizes instead of SMALL=1")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per cell (default 1200)")
    args = ap.parse_args(argv)
    for name in args.names or list(make_notebooks.NOTEBOOKS):
        if name not in make_notebooks.NOTEBOOKS:
            ap.error(f"unknown notebook {name!r}; known: {', '.join(make_notebooks.NOTEBOOKS)}")
        print(f"{name}: {build(name, small=not args.full, timeout=args.timeout):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
