"""The ``uldp`` command line: list and run the paper reproductions, and a short demo.

    uldp --version
    uldp list
    uldp run <experiment> [--quick] [--reps N] [--set KEY=VALUE[,VALUE...]] [--data PATH] [--out DIR] [--seed S]
             [--no-progress]
    uldp demo [--quick] [--reps N] [--set KEY=VALUE[,VALUE...]] [--out DIR]

``--set`` overrides a key of the registered configuration (``uldp run 001-fig5 --set eps=0.1,1,6 --set
report_reps=2``; ``run_config.json`` records the configuration used). User mistakes (unknown experiment, missing
or malformed data file, ``--reps 0``, a bad ``--set``) print one line on stderr and exit with status 2; no
traceback. Results (CSV, config, summary) are written before any figure; without the
optional ``[plot]`` extra the figures are skipped with a one-line note on how to install matplotlib.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from uldp_jax import _progress
from uldp_jax._version import __version__


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage too; keep it short)
        sys.stderr.write(f"uldp: error: {message}\n")
        raise SystemExit(2)


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


# Run times in the help, measured 2026-11-25 on the project's 2-core machine with an empty compile cache (`uptime`
# before and after each run): quiet = load average 0.2-1.5, loaded = shared with other sessions at 11-19.
_DEMO_HELP = ("reduced 001 Fig 5 (2 cores, 2026-11-25, 001's sampling model: 33 s at load average 0.6-1.0, "
              "142-167 s at load average 13-21; the earlier iid demo took 16 s quiet)")
_QUICK_HELP = ("CI-sized run (on 2 cores, 2026-11-25: demo 8 s, 001-fig5 16 s at load average below 2; 43-49 s "
               "and 106-143 s at load average 11-19)")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="uldp", description="Utility-optimized LDP: reproduce the papers' experiments.")
    p.add_argument("--version", action="version", version=f"uldp {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("list", help="list the experiments and datasets")
    for name, hlp in (("run", "run one experiment"), ("demo", _DEMO_HELP)):
        r = sub.add_parser(name, help=hlp)
        if name == "run":
            r.add_argument("experiment", help="experiment name (see 'uldp list')")
        r.add_argument("--quick", action="store_true", help=_QUICK_HELP)
        r.add_argument("--reps", type=_positive_int, default=None, help="repetitions (overrides the config)")
        r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE[,VALUE...]", dest="set",
                       help="override a config key, e.g. --set eps=0.1,1,6 --set report_reps=2 (repeatable; "
                            "the keys are the experiment's config.json keys)")
        r.add_argument("--data", default=None, help="real data: PATH for the first dataset, or name=PATH[,...]")
        r.add_argument("--out", default="results", help="output directory (default: results/)")
        r.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
        r.add_argument("--no-progress", action="store_true",
                       help="no progress bar (also silences the simulations' own; ULDP_PROGRESS=0 does so anywhere)")
    return p


def _list() -> None:
    from uldp_jax import data, experiments, mechanisms
    print("Experiments (uldp run NAME [--quick]):")
    for name in experiments.experiment_names():
        print(f"  {name:<16} {experiments.get_experiment(name).title}")
    print("\nMechanisms (ul.<name>; the example is a small instance):")
    for name, make in mechanisms.examples().items():
        print(f"  {name:<16} {make(1.0)!r}")
    print("\nDatasets (synthetic proxies by default; --data PATH loads the real files):")
    for name, desc in data.describe_datasets().items():
        print(f"  {name:<16} {desc}")


def _run(name: str, args) -> None:
    from uldp_jax import experiments
    from uldp_jax.experiments._runner import parse_set
    from uldp_jax.experiments._runner import UsageError
    exp = experiments.get_experiment(name)  # fail fast on an unknown name or a bad --set, before any work
    overrides = parse_set(exp, args.set)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out!r} is an existing file, not a directory; pass a directory for the results")
    os.environ.setdefault("MPLBACKEND", "Agg")
    quiet = _progress.quiet_auto() if args.no_progress else contextlib.nullcontext()
    with quiet:  # --no-progress: the run's bar and every simulate call's automatic bar stay silent
        experiments.run_experiment(name, quick=args.quick, reps=args.reps, data=args.data, out=args.out,
                                   seed=args.seed, progress=not args.no_progress, overrides=overrides)


def _user_errors() -> tuple:
    """Exceptions that mean a user mistake (one-line message); anything else is a bug and keeps its traceback."""
    from uldp_jax.data import DataError
    from uldp_jax.experiments._runner import UsageError
    return (UsageError, DataError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        _parser().print_help()
        return 2
    try:
        if args.command == "list":
            _list()
        elif args.command == "run":
            _run(args.experiment, args)
        else:
            _run("demo", args)
    except _user_errors() as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        sys.stderr.write(f"uldp: error: {msg}\n")
        return 2
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in ("matplotlib", "tqdm"):
            raise
        sys.stderr.write(f"uldp: error: {e.name} is not installed; install the plotting extra: "
                         "pip install 'uldp_jax[plot]'\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("uldp: interrupted\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
