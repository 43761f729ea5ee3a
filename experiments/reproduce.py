"""Runs the paper reproductions and keeps their outputs under experiments/<name>/.

    python experiments/reproduce.py --list
    python experiments/reproduce.py 001-fig5 003-fig3 [--quick] [--reps N] [--data PATH]
    python experiments/reproduce.py --all --quick          # every experiment at CI size
    python experiments/reproduce.py --write-configs        # experiments/<name>/config.json from the registry
    python experiments/reproduce.py 001-fig6 --set cases=4 --set datasets=foursquare   # scaled-down run

Each experiment's configuration lives in ``uldp_jax/experiments`` (``full`` = the paper's n, repetitions and grid;
``quick`` = CI-sized) and is written next to its results; ``run_config.json`` beside the plain ``results.csv``
repeats the configuration, the seed and the library versions, and labels the run "full" only when it is the paper's size, else "reduced" with every
deviation listed. ``uldp run NAME`` is the same with output under ``results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    from uldp_jax import experiments
    from uldp_jax.experiments._runner import parse_set

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--data", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write-configs", action="store_true")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE[,VALUE...]",
                    help='override a config key, e.g. --set cases=4 --set \'datasets=["foursquare"]\'')
    args = ap.parse_args(argv)
    names = list(experiments.experiment_names()) if args.all else args.names
    if args.list:
        for n in experiments.experiment_names():
            print(f"{n:14s} {experiments.get_experiment(n).title}")
        return 0
    if args.write_configs:
        for n in experiments.experiment_names():
            exp = experiments.get_experiment(n)
            os.makedirs(os.path.join(HERE, n), exist_ok=True)
            with open(os.path.join(HERE, n, "config.json"), "w") as fh:
                json.dump({"name": n, "title": exp.title, "full": exp.full, "quick": exp.quick}, fh, indent=2,
                          default=str)
                fh.write("\n")
        return 0
    for n in names:
        overrides = parse_set(experiments.get_experiment(n), args.set)
        experiments.run_experiment(n, quick=args.quick, reps=args.reps, data=args.data, seed=args.seed,
                                   out=HERE, progress=True, overrides=overrides)
    return 0


if __name__ == "__main__":
    sys.exit(main())
