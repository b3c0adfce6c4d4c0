"""One verdict format for every experiment: does our number reproduce the paper's?

A :class:`Verdict` compares one claim of a paper with what the run measured. It is *computed*
from the run's own tables by :func:`judge` (never written by hand): ``reproduced`` when our
number is within ``tolerance`` of the paper's, ``partly`` when it is within
``partly_factor * tolerance`` (or when the caller decides the claim's direction holds but not
its size), ``not`` otherwise. The tolerance should be the sampling error where there is one
(e.g. 2 standard errors of our estimate, plus the paper's own reporting precision); say how it
was derived in ``tolerance_note``.

Experiments return their verdicts in ``ExperimentResult.verdicts`` (or, as before, as
``[v.as_dict() for v in verdicts]`` under ``extra["verdicts"]``; the runner reads those once
with :meth:`Verdict.from_dict`). From there the runner and the CLI carry :class:`Verdict`
objects and serialise them once, to ``run.json``, ``summary.txt`` and ``reproduce.json``.
Summary sentences come from :func:`summary_lines`.

The reference number is the paper's by default; a claim checked against another reference (a
closed form, a theorem's bound) says so with ``reference="closed form"``, and its lines read
``closed form X`` instead of ``paper X``.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

STATUSES = ("reproduced", "partly", "not")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One paper claim against our measurement.

    Attributes:
      experiment: the experiment's CLI name.
      claim: the claim in a few words ("RW-Meta beats A&S at mu = 1, CA").
      status: ``reproduced``, ``partly`` or ``not``.
      ours: our number (or None for a purely qualitative claim).
      paper: the paper's number (or None).
      tolerance: the absolute tolerance used.
      tolerance_note: how the tolerance was derived ("2 SE of 20 runs + paper rounding").
      reason: one sentence on why, where the claim is not (fully) reproduced and we know why.
      reference: what ``paper`` is (default ``"paper"``; e.g. ``"closed form"``); the number
        stays in the ``paper`` field, and the label is written only when it is not the default.
    """

    experiment: str
    claim: str
    status: str
    ours: float | None = None
    paper: float | None = None
    tolerance: float | None = None
    tolerance_note: str = ""
    reason: str = ""
    reference: str = "paper"

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able dict (non-finite numbers: NaN as None, +-inf as ``"inf"``/``"-inf"``)."""
        out = dataclasses.asdict(self)
        for name in ("ours", "paper", "tolerance"):
            value = out[name]
            if value is not None and not math.isfinite(float(value)):
                out[name] = None if math.isnan(float(value)) else repr(float(value))
            elif value is not None:
                out[name] = float(value)
        if out["reference"] == "paper":
            del out["reference"]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | Verdict) -> Verdict:
        """The verdict :meth:`as_dict` wrote (a :class:`Verdict` is returned as it is).

        Raises ``ValueError`` naming a missing or unknown field or a bad status.
        """
        if isinstance(data, Verdict):
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"a verdict must be a Verdict or a dict, got {type(data).__name__}")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - fields)
        missing = [n for n in ("experiment", "claim", "status") if n not in data]
        if unknown or missing:
            raise ValueError(f"verdict {dict(data)!r}: unknown fields {unknown}, missing {missing}")
        values = dict(data)
        for name in ("ours", "paper", "tolerance"):
            if values.get(name) is not None:
                values[name] = float(values[name])  # "inf" / "-inf" as written by as_dict
        return cls(**values)

    def line(self) -> str:
        """One human-readable line: ``[status] claim: ours X vs paper Y (tol +-Z; note)``."""
        parts = [f"[{self.status}] {self.claim}"]
        if self.ours is not None or self.paper is not None:
            nums = []
            if self.ours is not None:
                nums.append(f"ours {_fmt(self.ours)}")
            if self.paper is not None:
                nums.append(f"{self.reference} {_fmt(self.paper)}")
            if self.tolerance is not None:
                tol = f"tolerance {_fmt(self.tolerance)}"
                if self.tolerance_note:
                    tol += f" = {self.tolerance_note}"
                nums.append(tol)
            elif self.tolerance_note:
                nums.append(self.tolerance_note)
            parts.append(": " + ", ".join(nums))
        elif self.tolerance_note:
            parts.append(f" ({self.tolerance_note})")
        if self.reason:
            parts.append(f". {self.reason}")
        return "".join(parts)


def _fmt(x: float) -> str:
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        return f"{x:.3g}"
    return f"{x:.4g}"


def judge(
    experiment: str,
    claim: str,
    ours: float,
    paper: float,
    tolerance: float,
    *,
    tolerance_note: str = "",
    partly_factor: float = 3.0,
    reason: str = "",
    reference: str = "paper",
) -> Verdict:
    """Compare ``ours`` with ``paper`` (the reference number) at absolute ``tolerance``.

    ``reproduced`` if ``|ours - paper| <= tolerance``; ``partly`` if within
    ``partly_factor * tolerance``; else ``not``. A NaN ``ours`` is ``not``. ``reason`` is kept only
    when the claim is not fully reproduced. ``reference`` labels the reference number where it
    is not the paper's (``judge(..., paper=0.5, reference="closed form")``).
    """
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    if not partly_factor >= 1:
        raise ValueError(f"partly_factor must be >= 1, got {partly_factor!r}")
    ours_f, paper_f = float(ours), float(paper)
    gap = abs(ours_f - paper_f)
    if math.isnan(gap):
        status = "not"
    elif gap <= tolerance:
        status = "reproduced"
    elif gap <= partly_factor * tolerance:
        status = "partly"
    else:
        status = "not"
    return Verdict(
        experiment, claim, status, ours_f, paper_f, float(tolerance), tolerance_note,
        reason if status != "reproduced" else "", _reference(reference),
    )


def _reference(label: Any) -> str:
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"reference must be a non-empty label such as 'closed form', got {label!r}")
    return " ".join(label.split())


def judge_condition(
    experiment: str,
    claim: str,
    holds: bool,
    *,
    partly: bool = False,
    ours: float | None = None,
    paper: float | None = None,
    tolerance: float | None = None,
    tolerance_note: str = "",
    reason: str = "",
    reference: str = "paper",
) -> Verdict:
    """A qualitative claim (an ordering, a sign): ``reproduced`` if ``holds``, ``partly`` if only
    ``partly`` holds (e.g. in some cells), else ``not``."""
    status = "reproduced" if holds else ("partly" if partly else "not")
    return Verdict(
        experiment, claim, status,
        None if ours is None else float(ours),
        None if paper is None else float(paper),
        None if tolerance is None else float(tolerance),
        tolerance_note, reason if status != "reproduced" else "", _reference(reference),
    )


def summary_lines(verdicts: Iterable[Verdict]) -> str:
    """The verdicts as summary text, one per line, with a count line first."""
    verdicts = list(verdicts)
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    head = (
        f"Verdicts: {counts['reproduced']} reproduced, {counts['partly']} partly, "
        f"{counts['not']} not (of {len(verdicts)} claims)."
    )
    return "\n".join([head, *(v.line() for v in verdicts)])


def verdict_table(verdicts: Sequence[dict[str, Any] | Verdict]) -> list[dict[str, Any]]:
    """Rows (dicts) for a CSV/JSON table or a printed table of verdicts."""
    rows = []
    for v in verdicts:
        d = v.as_dict() if isinstance(v, Verdict) else dict(v)
        rows.append({k: d.get(k) for k in (
            "experiment", "claim", "status", "ours", "paper", "tolerance", "tolerance_note",
            "reason")})
    return rows


def format_verdict_table(rows: Sequence[dict[str, Any] | Verdict]) -> str:
    """A fixed-width text table of verdict rows (``ldpjax reproduce`` prints it last).

    Columns: experiment, status, claim, ours, paper, tolerance; a row's ``reason`` follows on
    its own indented line. Long claims wrap onto continuation lines under the claim column (no
    claim is cut: two claims that differ only at their end stay distinguishable).
    """
    rows = verdict_table(rows)
    if not rows:
        return ""

    def num(x: Any) -> str:
        if x is None:
            return "-"
        try:
            return _fmt(float(x))
        except (TypeError, ValueError):
            return str(x)

    def cut(text: Any, width: int) -> str:
        text = " ".join(str(text or "").split())
        return text if len(text) <= width else text[: width - 3] + "..."

    claims = [textwrap.wrap(" ".join(str(r["claim"] or "").split()), 60) or [""] for r in rows]
    cells = [
        (cut(r["experiment"], 28), str(r["status"]), claim[0], num(r["ours"]),
         num(r["paper"]), num(r["tolerance"]))
        for r, claim in zip(rows, claims, strict=True)
    ]
    head = ("experiment", "status", "claim", "ours", "paper", "tolerance")
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    right = (False, False, False, True, True, True)

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if r else v.ljust(w)
                         for v, w, r in zip(values, widths, right, strict=True)).rstrip()

    out = [line(head), line(["-" * w for w in widths])]
    for row, cell, claim in zip(rows, cells, claims, strict=True):
        out.append(line(cell))
        out.extend(line(("", "", more, "", "", "")) for more in claim[1:])
        if row.get("reason"):
            out.append(" " * (widths[0] + 2) + "why: " + " ".join(str(row["reason"]).split()))
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    out.append(f"{counts['reproduced']} reproduced, {counts['partly']} partly, {counts['not']} not "
               f"(of {len(rows)} claims)")
    return "\n".join(out)


__all__ = [
    "STATUSES",
    "Verdict",
    "format_verdict_table",
    "judge",
    "judge_condition",
    "summary_lines",
    "verdict_table",
]
