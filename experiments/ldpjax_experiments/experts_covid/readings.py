"""Privacy units: which neighbouring relation each model protects, and the readings that pair
a local relation (RW-Meta, RW-FTPL) with a central one (A&S).

A weekly release is a vector of n hospital densities in [0, 1]. ``hospital``: neighbours differ
in one hospital's weekly report (l2 sensitivity 1). ``vector``: neighbours differ in a state's
whole weekly vector (l2 sensitivity sqrt(n)). A custom unit is a positive number (the l2
sensitivity itself).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

UNIT_PROTECTS = {
    "hospital": "one hospital's weekly report (l2 sensitivity 1)",
    "vector": "a state's whole weekly vector (l2 sensitivity sqrt(n))",
}
MIXED_NOTE = "resembles the paper's table; not a like-for-like comparison"
UNITS_CAPTION = (
    "per column (local relation / central relation): hospital = one hospital's weekly report "
    "(l2 sensitivity 1); vector = a state's whole weekly vector (sensitivity sqrt(n)); mixed = "
    f"hospital for RW-Meta, vector for A&S ({MIXED_NOTE})"
)


@dataclasses.dataclass(frozen=True)
class Reading:
    """One pair of neighbouring relations: the local one (RW-Meta, RW-FTPL) and the central one
    (A&S). ``ldp`` / ``central`` are ``hospital``, ``vector`` or a number (l2 sensitivity)."""

    name: str
    ldp: str
    central: str
    note: str = ""

    @property
    def title(self) -> str:
        if self.name == "mixed":
            return "mixed: hospital (LDP) / vector (CDP)"
        if self.name == "custom":
            return f"custom: LDP sensitivity {self.ldp} / central {self.central}"
        return f"{self.name}/{self.name}"

    def protects(self) -> str:
        local = UNIT_PROTECTS.get(self.ldp, f"l2 sensitivity {self.ldp}")
        central = UNIT_PROTECTS.get(self.central, f"l2 sensitivity {self.central}")
        text = (
            f"RW-Meta/RW-FTPL (local mu-GDP per weekly release): {local}; A&S (central mu-GDP "
            f"of the whole tree release): {central}"
        )
        return text + (f" [{self.note}]" if self.note else "")


READINGS = {
    "hospital": Reading("hospital", "hospital", "hospital", "one relation for both models"),
    "vector": Reading("vector", "vector", "vector", "one relation for both models"),
    "mixed": Reading("mixed", "hospital", "vector", MIXED_NOTE),
}


def unit_text(text: str) -> str:
    """Normalise a sensitivity option: 'hospital', 'vector' or a positive number as text."""
    text = str(text).strip().lower()
    if text in ("hospital", "1", "1.0"):
        return "hospital"
    if text in ("vector", "sqrt-n", "sqrtn", "sqrt(n)"):
        return "vector"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(
            f"sensitivity must be 'hospital' (1), 'vector' / 'sqrt-n' (sqrt(n)) or a positive "
            f"number; got {text!r}"
        )
    return f"{value:g}"


def sensitivity(unit: str, n: int) -> float:
    """The l2 sensitivity of a weekly release of ``n`` hospitals under ``unit``."""
    if unit == "hospital":
        return 1.0
    if unit == "vector":
        return math.sqrt(n)
    return float(unit)


def sensitivity_text(unit: str, n: int) -> str:
    """The l2 sensitivity of ``unit`` as a table cell (``sqrt(n) = 4.9``, ``1`` or the number)."""
    if unit == "vector":
        return f"sqrt(n) = {math.sqrt(n):.3g}"
    return "1" if unit == "hospital" else unit


def readings_from(config: Mapping[str, Any]) -> list[Reading]:
    """The readings a run reports, headline first (options ``privacy_unit``, ``readings``,
    ``ldp_sensitivity``, ``central_sensitivity``)."""
    ldp, central = (
        str(config["ldp_sensitivity"]).strip(),
        str(config["central_sensitivity"]).strip(),
    )
    if ldp or central:  # one custom pair; an unset side keeps the paper's sqrt(n)
        return [Reading("custom", unit_text(ldp or "vector"), unit_text(central or "vector"))]
    unit = str(config["privacy_unit"]).strip().lower()
    if unit not in ("hospital", "vector"):
        raise ValueError(f"privacy_unit must be 'hospital' or 'vector'; got {unit!r}")
    names = [str(r).strip().lower() for r in config["readings"]]
    for r in names:
        if r not in READINGS:
            raise ValueError(f"readings must be among {sorted(READINGS)}; got {r!r}")
    names = [unit] + [r for r in dict.fromkeys(names) if r != unit]  # headline first
    return [READINGS[r] for r in names]


__all__ = [
    "MIXED_NOTE",
    "READINGS",
    "UNITS_CAPTION",
    "UNIT_PROTECTS",
    "Reading",
    "readings_from",
    "sensitivity",
    "sensitivity_text",
    "unit_text",
]
