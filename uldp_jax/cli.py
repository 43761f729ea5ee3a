"""The ``uldp`` command line: list and run the paper reproductions, and a short demo.

The papers are called by codes: 001 = Murakami & Kawamoto (USENIX Security 2019), 003 = He et al. (GLUTF),
004 = Acharya et al. (ICML 2020, context-aware LDP).

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
import difflib
import json
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


PAPERS = ("001 = Murakami & Kawamoto, USENIX Security 2019 (uRR, uRAP, PUM); 003 = He et al., GLUTF (uSS, uUE, "
          "uLH, uWheel); 004 = Acharya et al., ICML 2020 (context-aware LDP, Hadamard response)")
_DESCRIPTION = ("Utility-optimized and context-aware local differential privacy: reproduce the papers' figures and "
                "tables. Papers: " + PAPERS + ".")
_DEMO_HELP = ("run a small reproduction of 001 Fig 5: TV of RR, uRR, RAPPOR and uRAP against eps on a 625-item "
              "proxy (prints a table, writes results/demo/; about a minute on 2 cores)")
_RUN_HELP = "run one paper reproduction by name (see 'uldp list'); writes results/NAME/"
_LIST_HELP = "list the experiments (what each reproduces, its size, its last committed run time), mechanisms, datasets"
_QUICK_HELP = "CI size: a reduced run that finishes in seconds to minutes (the full study can take hours)"


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="uldp", description=_DESCRIPTION)
    p.add_argument("--version", action="version", version=f"uldp {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("list", help=_LIST_HELP)
    for name, hlp in (("run", _RUN_HELP), ("demo", _DEMO_HELP)):
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


def _committed_run(name: str) -> str:
    """``; committed reduced run 142 s`` from a checkout's ``experiments/NAME/run_config.json``; empty when
    this is an installed copy without the committed results."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments", name,
                        "run_config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            rc = json.load(fh)
        return f"; committed {rc.get('mode', '?')} run {float(rc['elapsed_s']):.0f} s"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _list() -> None:
    from uldp_jax import data, experiments, mechanisms
    from uldp_jax.experiments._runner import run_size

    print(f"Papers: {PAPERS}.\n")
    print("Experiments (uldp run NAME [--quick]); in brackets: the full run's size against the paper's, and the "
          "committed run's size and time (experiments/NAME/run_config.json):")
    for name in experiments.experiment_names():
        exp = experiments.get_experiment(name)
        size, _ = run_size(exp, dict(exp.full))
        label = "paper size" if size == "full" else "smaller than the paper"
        print(f"  {name:<16} {exp.title} [full: {label}{_committed_run(name)}]")
    print("\nMechanisms (ul.<name>; the example is a small instance):")
    for name, make in mechanisms.examples().items():
        print(f"  {name:<16} {make(1.0)!r}")
    print("\nDatasets (synthetic proxies by default; --data PATH loads the real files):")
    for name, desc in data.describe_datasets().items():
        print(f"  {name:<16} {desc}")


def _known(name: str) -> None:
    """A one-line error for an unknown experiment, with the closest names ("did you mean ...?")."""
    from uldp_jax import experiments
    from uldp_jax.experiments._runner import UsageError

    names = experiments.experiment_names()
    if name in names:
        return
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UsageError(f"unknown experiment {name!r}{hint} ('uldp list' shows all {len(names)})")


def _run(name: str, args) -> None:
    from uldp_jax import experiments
    from uldp_jax.experiments._runner import parse_set
    from uldp_jax.experiments._runner import UsageError
    _known(name)
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
