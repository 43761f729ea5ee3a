"""``CheckRow`` and ``CheckReport``: what ``ul.check`` found, one row per check, and the verdict that tells the
whole truth (a skipped row is named in it, never hidden behind a bare "ok")."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class CheckRow:
    """One line of a ``CheckReport``.

    Attributes:
      name: the check (``"audit"``, ``"keys"``, ``"reports"``, ``"sampler"``, ``"leak"``, ``"debias"``,
        ``"rank"``, ``"likelihood"``, ``"draws"``).
      status: ``"pass"``, ``"FAIL"``, ``"warn"`` (a cost, not an error: ``ok`` stays true) or ``"skip"``.
      detail: what was measured (or why it was skipped).
    """

    name: str
    status: str
    detail: str


def skip(name: str, err: Exception | str) -> CheckRow:
    """A skipped row with its reason (an exception's type and message, or a sentence)."""
    return CheckRow(name, "skip", err if isinstance(err, str) else f"{type(err).__name__}: {err}")


@dataclasses.dataclass(frozen=True, repr=False)
class CheckReport:
    """What ``ul.check`` found; prints as a short table.

    Attributes:
      mechanism: the mechanism's class name.
      rows: one ``CheckRow`` per check, in the order of ``ul.check``'s docstring.
    """

    mechanism: str
    rows: tuple[CheckRow, ...]

    @property
    def ok(self) -> bool:
        """No check failed. A skipped check did not fail, but it did not pass either: ``skipped`` names them
        and ``verdict`` says how many."""
        return all(r.status != "FAIL" for r in self.rows)

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the failed checks."""
        return tuple(r.name for r in self.rows if r.status == "FAIL")

    @property
    def skipped(self) -> tuple[str, ...]:
        """Names of the checks that could not run."""
        return tuple(r.name for r in self.rows if r.status == "skip")

    @property
    def verdict(self) -> str:
        """``"ok"``, ``"ok (2 of 9 checks skipped)"`` or ``"FAILED: sampler, leak"``."""
        if not self.ok:
            return "FAILED: " + ", ".join(self.failed)
        if self.skipped:
            return f"ok ({len(self.skipped)} of {len(self.rows)} checks skipped)"
        return "ok"

    def __getitem__(self, name: str) -> CheckRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def __repr__(self) -> str:
        width = max(len(r.name) for r in self.rows)
        lines = [f"ul.check({self.mechanism}): {self.verdict}"]
        lines += [f"  {r.name:<{width}}  {r.status:<4}  {r.detail}" for r in self.rows]
        return "\n".join(lines)

    __str__ = __repr__
