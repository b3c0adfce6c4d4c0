"""One verdict format for every experiment: does our number reproduce the paper's?

A :class:`Verdict` compares one claim of a paper with what the run measured. It is *computed*
from the run's own tables by :func:`judge` (never written by hand): ``reproduced`` when our
number is within ``tolerance`` of the paper's, ``partly`` when it is within
``partly_factor * tolerance`` (or when the caller decides the claim's direction holds but not
its size), ``not`` otherwise. The tolerance should be the sampling error where there is one
(e.g. 2 standard errors of our estimate, plus the paper's own reporting precision); say how it
was derived in ``tolerance_note``.

Experiments return their verdicts as :class:`Verdict` objects in ``ExperimentResult.verdicts``
(a plugin written before that field may still put ``[v.as_dict() ...]`` under
``extra["verdicts"]``; the runner reads those once with :meth:`Verdict.from_dict`). The runner
and the CLI carry :class:`Verdict` objects and serialise them once, to ``run.json``,
``summary.txt`` and ``reproduce.json`` (rows: :func:`verdict_table`). Summary sentences come
from :func:`summary_lines`, the count sentence from :func:`count_line`.

The reference number is the paper's by default; a claim checked against another reference (a
closed form, a theorem's bound) says so with ``reference="closed form"``, and its lines read
``closed form X`` instead of ``paper X``.

Three fields let a reader trust a row on its own:

* ``measure``: what ``ours`` and the reference number are, with units ("empirical coverage of
  the 95% CI over 100 replications"); a row reads ``MEASURE: ours X vs paper Y, tolerance Z``.
* ``data``: what the claim was judged on, one of :data:`DATA_LABELS` (``real``, ``real
  extract``, ``synthetic stand-in`` where real data was absent or is not public, ``synthetic``
  where the paper's own experiment is synthetic, ``none`` for closed forms). Each experiment
  sets it from what it actually loaded (:func:`with_data`).
* ``kind``: one of :data:`KINDS`. Only ``paper claim`` rows are counted as the papers' claims;
  ``self-check`` rows (a library invariant such as "spend <= gamma", a solver against its
  closed form) and ``demo`` rows are counted apart (:func:`counts`).
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

STATUSES = ("reproduced", "partly", "not")
#: What a verdict is: one of the papers' claims, a check of the library itself, or the demo's.
KINDS = ("paper claim", "self-check", "demo")
#: What a verdict was judged on (``""``: not said, only in verdicts written before the field).
DATA_LABELS = ("real", "real extract", "synthetic stand-in", "synthetic", "none")


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
      measure: what ``ours`` and ``paper`` measure, with units.
      data: what the claim was judged on, one of :data:`DATA_LABELS` (``""``: not said).
      kind: one of :data:`KINDS` (default ``"paper claim"``).
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
    measure: str = ""
    data: str = ""
    kind: str = "paper claim"

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.data not in ("", *DATA_LABELS):
            raise ValueError(f"data must be one of {DATA_LABELS}, got {self.data!r}")

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

    def numbers(self) -> str:
        """What was measured, in words: ``MEASURE: ours X vs paper Y, tolerance Z = note``."""
        nums = []
        if self.ours is not None or self.paper is not None:
            pair = []
            if self.ours is not None:
                pair.append(f"ours {_fmt(self.ours)}")
            if self.paper is not None:
                pair.append(f"{self.reference} {_fmt(self.paper)}")
            nums.append(" vs ".join(pair))
            if self.tolerance is not None:
                tol = f"tolerance {_fmt(self.tolerance)}"
                if self.tolerance_note:
                    tol += f" = {self.tolerance_note}"
                nums.append(tol)
            elif self.tolerance_note:
                nums.append(self.tolerance_note)
        elif self.tolerance_note:
            nums.append(self.tolerance_note)
        text = ", ".join(nums)
        if self.measure:
            return f"{self.measure}: {text}" if text else self.measure
        return text

    def line(self) -> str:
        """One human-readable line:
        ``[status] claim: MEASURE: ours X vs paper Y, tolerance Z = note. reason``, with
        ``(self-check)`` / ``(demo)`` and ``[data: LABEL]`` where they apply."""
        tag = "" if self.kind == "paper claim" else f" ({self.kind})"
        parts = [f"[{self.status}]{tag} {self.claim}"]
        numbers = self.numbers()
        if numbers:
            parts.append(f": {numbers}")
        if self.reason:
            parts.append(f". {self.reason}")
        if self.data:
            parts.append(f" [data: {self.data}]")
        return "".join(parts)

    def labelled(self, **changes: Any) -> Verdict:
        """This verdict with ``measure``, ``data`` or ``kind`` set (validated as at creation)."""
        allowed = {"measure", "data", "kind"}
        if set(changes) - allowed:
            raise ValueError(f"labelled() sets only {sorted(allowed)}, got {sorted(changes)}")
        return dataclasses.replace(self, **changes)


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
    measure: str = "",
    kind: str = "paper claim",
    data: str = "",
) -> Verdict:
    """Compare ``ours`` with ``paper`` (the reference number) at absolute ``tolerance``.

    ``reproduced`` if ``|ours - paper| <= tolerance``; ``partly`` if within
    ``partly_factor * tolerance``; else ``not``. A NaN ``ours`` is ``not``. ``reason`` is kept only
    when the claim is not fully reproduced. ``reference`` labels the reference number where it
    is not the paper's (``judge(..., paper=0.5, reference="closed form")``); ``measure`` says
    what both numbers are, ``kind`` and ``data`` are as on :class:`Verdict`.

    Example:
      >>> v = judge("x", "coverage is nominal", 0.951, 0.95, 0.009, reference="nominal",
      ...           measure="empirical coverage of the 95% CI", tolerance_note="3 SE")
      >>> v.line()
      '[reproduced] coverage is nominal: empirical coverage of the 95% CI: ours 0.951 vs nominal 0.95, tolerance 0.009 = 3 SE'
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
        reason if status != "reproduced" else "", _reference(reference), measure, data, kind,
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
    measure: str = "",
    kind: str = "paper claim",
    data: str = "",
) -> Verdict:
    """A qualitative claim (an ordering, a sign): ``reproduced`` if ``holds``, ``partly`` if only
    ``partly`` holds (e.g. in some cells), else ``not``.

    Without a ``measure`` and a ``tolerance``, the ``tolerance_note`` says what ``ours`` is (the
    share of cells where the claim holds, ...) and becomes the measure.

    Example:
      >>> judge_condition("x", "A beats B in every cell", False, partly=True, ours=0.5,
      ...                 paper=1.0, tolerance_note="share of cells where A - B > 2 SE").line()
      '[partly] A beats B in every cell: share of cells where A - B > 2 SE: ours 0.5 vs paper 1'
    """
    status = "reproduced" if holds else ("partly" if partly else "not")
    if not measure and tolerance is None:
        measure, tolerance_note = tolerance_note, ""
    return Verdict(
        experiment, claim, status,
        None if ours is None else float(ours),
        None if paper is None else float(paper),
        None if tolerance is None else float(tolerance),
        tolerance_note, reason if status != "reproduced" else "", _reference(reference),
        measure, data, kind,
    )


def with_data(verdicts: Iterable[Verdict], data: str) -> tuple[Verdict, ...]:
    """``verdicts`` with ``data`` set to what the run actually loaded (one of
    :data:`DATA_LABELS`); a verdict that already says its data keeps it.

    Example:
      >>> v = judge_condition("x", "holds", True)
      >>> with_data([v], "synthetic stand-in")[0].data
      'synthetic stand-in'
    """
    return tuple(v if v.data else v.labelled(data=data) for v in verdicts)


def counts(verdicts: Iterable[Verdict | Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``{kind: {status: count}}`` over :data:`KINDS` and :data:`STATUSES` (rows as dicts are
    read as :meth:`Verdict.as_dict` wrote them; a row without ``kind`` is a paper claim).

    Example:
      >>> counts([judge_condition("x", "a", True), judge_condition("x", "b", False,
      ...         kind="self-check")])["self-check"]
      {'reproduced': 0, 'partly': 0, 'not': 1}
    """
    out = {k: dict.fromkeys(STATUSES, 0) for k in KINDS}
    for v in verdicts:
        d = v if isinstance(v, Mapping) else {"kind": v.kind, "status": v.status}
        out[d.get("kind") or "paper claim"][d["status"]] += 1
    return out


def count_line(verdicts: Iterable[Verdict | Mapping[str, Any]]) -> str:
    """The summary sentence: the papers' claims by status, the self-checks and demo checks
    counted apart.

    Example:
      >>> count_line([judge_condition("x", "a", True), judge_condition("x", "b", True,
      ...             kind="self-check")])
      '1 reproduced, 0 partly, 0 not (of 1 paper claims); self-checks: 1 of 1 hold'
    """
    c = counts(verdicts)
    claims = c["paper claim"]
    parts = [f"{claims['reproduced']} reproduced, {claims['partly']} partly, "
             f"{claims['not']} not (of {sum(claims.values())} paper claims)"]
    for kind, word in (("self-check", "self-checks"), ("demo", "demo checks")):
        total = sum(c[kind].values())
        if total:
            parts.append(f"{word}: {c[kind]['reproduced']} of {total} hold")
    return "; ".join(parts)


def summary_lines(verdicts: Iterable[Verdict]) -> str:
    """The verdicts as summary text, one per line, with a count line first."""
    verdicts = list(verdicts)
    head = f"Verdicts: {count_line(verdicts)}."
    return "\n".join([head, *(v.line() for v in verdicts)])


ROW_KEYS = ("experiment", "kind", "data", "claim", "status", "measure", "ours", "paper",
            "reference", "tolerance", "tolerance_note", "reason", "text")


def verdict_table(verdicts: Sequence[dict[str, Any] | Verdict]) -> list[dict[str, Any]]:
    """Rows (dicts) for a CSV/JSON table or a printed table of verdicts: the fields of
    :data:`ROW_KEYS`, ``text`` being the row in words (:meth:`Verdict.numbers`)."""
    rows = []
    for v in verdicts:
        verdict = Verdict.from_dict(_row_to_dict(v))
        d = verdict.as_dict()
        d["reference"] = verdict.reference
        d["text"] = verdict.numbers()
        rows.append({k: d.get(k) for k in ROW_KEYS})
    return rows


def format_verdict_table(rows: Sequence[dict[str, Any] | Verdict]) -> str:
    """A fixed-width text table of verdict rows (``ldpjax reproduce`` prints it last).

    Columns: experiment, kind, data, status, claim. Under the claim, each row says what was
    measured (``MEASURE: ours X vs paper Y, tolerance Z``) and, where a claim is not reproduced
    and we know why, ``why: ...``. Long texts wrap under the claim column (nothing is cut: two
    claims that differ only at their end stay distinguishable). The last line counts the papers'
    claims apart from the self-checks and the demo's checks.
    """
    verdicts = [Verdict.from_dict(_row_to_dict(r)) for r in rows]
    if not verdicts:
        return ""
    width = 64
    cells = [(v.experiment, v.kind, v.data or "-", v.status) for v in verdicts]
    head = ("experiment", "kind", "data", "status", "claim")
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head[:-1])]
    indent = " " * (sum(widths) + 2 * len(widths))

    def wrap(text: str, first: str = "") -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, initial_indent=first,
                             subsequent_indent=" " * len(first)) or [first]

    out = ["  ".join(h.ljust(w) for h, w in zip(head[:-1], widths, strict=True)) + "  claim",
           "  ".join("-" * w for w in widths) + "  " + "-" * width]
    for v, cell in zip(verdicts, cells, strict=True):
        claim = wrap(v.claim)
        out.append("  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)) + "  "
                   + claim[0])
        out.extend(indent + more for more in claim[1:])
        if v.numbers():
            out.extend(indent + more for more in wrap(v.numbers(), "measured: "))
        if v.reason:
            out.extend(indent + more for more in wrap(v.reason, "why: "))
    out.append(count_line(verdicts))
    return "\n".join(out)


def _row_to_dict(row: dict[str, Any] | Verdict) -> dict[str, Any] | Verdict:
    """A row of :func:`verdict_table` back to :meth:`Verdict.as_dict`'s fields."""
    if isinstance(row, Verdict):
        return row
    fields = {f.name for f in dataclasses.fields(Verdict)}
    return {k: v for k, v in row.items() if k in fields and v is not None}


__all__ = [
    "DATA_LABELS",
    "KINDS",
    "ROW_KEYS",
    "STATUSES",
    "Verdict",
    "count_line",
    "counts",
    "format_verdict_table",
    "judge",
    "judge_condition",
    "summary_lines",
    "verdict_table",
    "with_data",
]
