"""Generated blocks of the docs: numbers about runs come from a run's JSON, never typed.

A Markdown file marks a block with

    <!-- generated: NAME key=value ... -->
    ...
    <!-- end generated -->

and :func:`fill` replaces what is between the markers by what ``NAME`` renders from the
results folder (``python docs/build.py --results docs/results``; ``--check`` only compares):

* ``verdict-summary``: counts of the papers' claims (reproduced / partly / not) per experiment
  and in all, from ``reproduce.json`` (the file ``ldpjax reproduce`` writes), with the data
  they were judged on and the self-checks and demo checks counted apart; beside them the counts
  of ``reproduce-no-data.json`` where the folder has one (a clone without ``../shared/data``);
* ``verdict-counts``: the same counts in one sentence (for the README);
* ``verdicts-not-reproduced``: every verdict that is not ``reproduced``, its claim, our and the
  paper's number, the tolerance and the reason;
* ``reproduce-timing``: the wall and CPU seconds of the run behind ``reproduce.json``, its
  workers, cores and compile cache (cold or warm), and each experiment's wall seconds
  (``brief=1``: one sentence, for the README);
* ``bench``: the ``ldpjax bench --json`` records of ``bench.json``, if the folder has one
  (``file=NAME``: that file of the folder instead; ``family=F`` / ``exclude=F``: only / all
  but workload family F; ``command=KEY``: the command is ``commands.json``'s KEY entry).

Options: ``experiments=a,b`` restricts the two verdict blocks to those experiments. The command
shown is ``reproduce.json``'s ``command`` (a string or a list) where present, else
``commands.json``'s ``reproduce`` / ``bench`` entry in the results folder, else the command
rebuilt from the records (``ldpjax reproduce --out DIR`` from the experiments' output folders;
for the bench, from the records' size, mode and repeats).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

BLOCK = re.compile(r"(<!-- generated: ([\w-]+)([^>]*?) -->\n)(.*?)(<!-- end generated -->)",
                   re.DOTALL)
STATUSES = ("reproduced", "partly", "not")


def _cell(value) -> str:
    """A table cell: numbers to 4 significant digits, pipes escaped, no newlines."""
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: Iterable[str], rows: Iterable[Iterable]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _command(results: Path, data, which: str, default: str) -> str:
    command = data.get("command") if isinstance(data, dict) else None
    if command is None:
        extra = results / "commands.json"
        if extra.is_file():
            command = json.loads(extra.read_text()).get(which)
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    return command or default


def _options(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split() if "=" in item)


def _verdicts(results: Path, options: dict[str, str]) -> tuple[list[dict], dict, str]:
    path = results / options.get("file", "reproduce.json")
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: copy the reproduce.json of a run there")
    data = json.loads(path.read_text())
    verdicts = list(data.get("verdicts", []))
    wanted = options.get("experiments")
    if wanted:
        names = set(wanted.split(","))
        verdicts = [v for v in verdicts if v.get("experiment") in names]
    folders = {str(Path(e["output"]).parent) for e in data.get("experiments", [])
               if e.get("output")}
    default = "ldpjax reproduce" + (f" --out {folders.pop()}" if len(folders) == 1 else "")
    return verdicts, data, _command(results, data, "reproduce", default)


NO_DATA = "reproduce-no-data.json"


def _kind(v: dict) -> str:
    return v.get("kind") or "paper claim"


def _data_labels(rows: list[dict]) -> str:
    labels = sorted({v.get("data") or "not said" for v in rows})
    return ", ".join(labels)


def _claim_counts(rows: list[dict]) -> list[int]:
    claims = [v for v in rows if _kind(v) == "paper claim"]
    return [sum(v.get("status") == s for v in claims) for s in STATUSES] + [len(claims)]


def _checks(rows: list[dict]) -> str:
    checks = [v for v in rows if _kind(v) != "paper claim"]
    if not checks:
        return "-"
    held = sum(v.get("status") == "reproduced" for v in checks)
    kinds = " + ".join(sorted({_kind(v) for v in checks}))
    return f"{held} of {len(checks)} hold ({kinds})"


def verdict_summary(results: Path, options: dict[str, str]) -> list[str]:
    """Counts per experiment and in all (the ``verdict-summary`` block): the papers' claims by
    status, the data they were judged on, and the self-checks and demo checks counted apart;
    with ``reproduce-no-data.json`` in the results folder (a run with ``LDPJAX_SHARED_DATA``
    pointed at an empty folder: a clone without ``../shared/data``), its counts beside them."""
    verdicts, data, command = _verdicts(results, options)
    no_data = None
    if (results / NO_DATA).is_file():
        no_data = _verdicts(results, {**options, "file": NO_DATA})
    order = [e.get("experiment") for e in data.get("experiments", [])]
    order += sorted({v["experiment"] for v in verdicts} - set(order))
    rows = []
    for name in order:
        mine = [v for v in verdicts if v.get("experiment") == name]
        if not mine:
            continue
        row = [f"`{name}`", _data_labels(mine), *_claim_counts(mine), _checks(mine)]
        if no_data is not None:
            theirs = [v for v in no_data[0] if v.get("experiment") == name]
            r, p, n, _ = _claim_counts(theirs)
            row += [_data_labels(theirs) if theirs else "-", f"{r} / {p} / {n}"]
        rows.append(row)
    total = ["**all**", "", *_claim_counts(verdicts), _checks(verdicts)]
    header = ["experiment", "judged on", *STATUSES, "paper claims", "self-checks, demo"]
    lines = [f"Verdicts of `{command}` (`reproduce.json`), generated by `docs/build.py`. Only the "
             "papers' claims are counted by status; the library's self-checks and the demo's "
             f"checks are counted apart{_stale(verdicts)}."]
    if no_data is not None:
        r, p, n, _ = _claim_counts(no_data[0])
        total += ["", f"{r} / {p} / {n}"]
        header += ["without ../shared/data: judged on", "reproduced / partly / not"]
        lines.append(f"The last two columns: `{no_data[2]}` (`{NO_DATA}`), what a clone without "
                     "`../shared/data` gets.")
    rows.append(total)
    return [*lines, "", *_table(header, rows)]


def verdict_counts(results: Path, options: dict[str, str]) -> list[str]:
    """One sentence of counts (the ``verdict-counts`` block, for the README): the papers'
    claims of the docs' run and, where ``reproduce-no-data.json`` exists, of a clone without
    ``../shared/data``."""
    verdicts, _, command = _verdicts(results, options)
    r, p, n, total = _claim_counts(verdicts)
    text = (f"Of the papers' {total} claims, `{command}` reproduced **{r}**, partly **{p}**, "
            f"not **{n}** (`reproduce.json`)")
    if (results / NO_DATA).is_file():
        theirs, _, other = _verdicts(results, {**options, "file": NO_DATA})
        r2, p2, n2, total2 = _claim_counts(theirs)
        stand_in = sorted({v["experiment"] for v in theirs if v.get("data") ==
                           "synthetic stand-in"})
        text += (f"; a clone without `../shared/data` gets {r2} / {p2} / {n2} of {total2} "
                 f"(`{other}`, `{NO_DATA}`: {', '.join(f'`{e}`' for e in stand_in)} then run on "
                 "synthetic stand-ins)")
    checks = [v for v in verdicts if _kind(v) != "paper claim"]
    held = sum(v.get("status") == "reproduced" for v in checks)
    if checks:
        text += f". Self-checks and demo checks, counted apart: {held} of {len(checks)} hold"
    return [text + f"{_stale(verdicts)} (generated by `docs/build.py`)."]


def _stale(verdicts: list[dict]) -> str:
    """A warning where the rows predate the ``kind`` and ``data`` fields."""
    if all("kind" in v for v in verdicts):
        return ""
    return (". This `reproduce.json` was written before verdicts said their kind and data, so "
            "every row counts as a paper claim here: rerun it (`docs/results/README.md`)")


def verdicts_not_reproduced(results: Path, options: dict[str, str]) -> list[str]:
    """Every verdict whose status is not ``reproduced`` (the ``verdicts-not-reproduced`` block)."""
    verdicts, _, command = _verdicts(results, options)
    rows = [[f"`{v.get('experiment')}`", _kind(v), v.get("data"), v.get("claim"),
             v.get("status"), v.get("text") or _numbers(v), v.get("reason")]
            for v in verdicts if v.get("status") != "reproduced"]
    if not rows:
        return [f"Every claim of `{command}` here is reproduced."]
    return [f"From `{command}` (`reproduce.json`), generated by `docs/build.py`:", "",
            *_table(["experiment", "kind", "judged on", "claim", "status", "measured",
                     "reason"], rows)]


def _numbers(v: dict) -> str:
    """``ours X vs paper Y, tolerance Z`` of a row written before rows carried ``text``."""
    parts = []
    if v.get("ours") is not None:
        parts.append(f"ours {_cell(v['ours'])}")
    if v.get("paper") is not None:
        parts.append(f"{v.get('reference') or 'paper'} {_cell(v['paper'])}")
    text = " vs ".join(parts)
    if v.get("tolerance") is not None:
        text += f", tolerance {_cell(v['tolerance'])}"
    return text


def reproduce_timing(results: Path, options: dict[str, str]) -> list[str]:
    """How long the run behind ``reproduce.json`` took (the ``reproduce-timing`` block)."""
    _, data, command = _verdicts(results, options)
    wall = data.get("wall_seconds")
    if wall is None:
        return [f"The `reproduce.json` of `{command}` records no run time (an older ldpjax "
                "wrote it): copy a new run's `reproduce.json` to the results folder."]
    cache = data.get("compile_cache_entries_at_start")
    state = ("compile cache off" if cache is None
             else "cold: empty compile cache" if cache == 0
             else f"warm: {cache} compile-cache files at the start")
    cpu = data.get("cpu_seconds")
    rows = [[f"`{e.get('experiment')}`", e.get("status"), e.get("wall_seconds")]
            for e in data.get("experiments", [])]
    if options.get("brief"):
        return [f"The run these docs were built from, `{command}` ({data.get('jobs', '?')} "
                f"worker(s) on {data.get('cores', '?')} cores, {state}), took "
                f"**{_cell(float(wall))} s** (generated from `reproduce.json`; more in "
                "[Benchmarks](docs/pages/benchmarks.md#where-the-time-goes))."]
    return [f"`{command}` (size `{data.get('size', '?')}`, {data.get('jobs', '?')} worker(s) "
            f"on {data.get('cores', '?')} cores, {state}): **{_cell(float(wall))} s** wall, "
            f"{_cell(None if cpu is None else float(cpu))} s of CPU time (the command and its "
            "workers), generated by `docs/build.py` from `reproduce.json`. Each experiment's "
            "wall seconds, measured while it shared the cores:", "",
            *_table(["experiment", "status", "wall s"], rows)]


def bench(results: Path, options: dict[str, str]) -> list[str]:
    """The ``ldpjax bench --json`` records (the ``bench`` block)."""
    name = options.get("file", "bench.json")  # file=NAME: a bench run of its own
    path = results / name
    if not path.is_file():
        return [f"No `{name}` in the results folder: run "
                f"`ldpjax bench --json docs/results/{name}` and rebuild the docs."]
    records = json.loads(path.read_text())
    # family=F: only the records of workload family F; exclude=F: all but them (a family run
    # by its own command, named by command=KEY of commands.json)
    if "family" in options:
        records = [r for r in records if r.get("family") == options["family"]]
    if "exclude" in options:
        records = [r for r in records if r.get("family") != options["exclude"]]
    first = records[0] if records else {}
    default = (f"ldpjax bench --size {first.get('size', 'small')}"
               + (f" --rng {first['mode']}" if first.get("mode", "default") != "default" else "")
               + f" --repeats {first.get('repeats', 5)} --json bench.json")
    command = _command(results, {}, options.get("command", "bench"), default)
    rows = [[r.get("workload"), r.get("numpy_seconds"), r.get("compile_seconds"),
             r.get("ldpjax_seconds"), f"{r.get('speedup', float('nan')):.2f}x", r.get("agree"),
             f"{_cell(r.get('numpy_peak_mb'))} / {_cell(r.get('ldpjax_peak_mb'))}",
             r.get("rng_floor_seconds"), r.get("floor_ratio"), r.get("key_impl")]
            for r in records]
    backend = ", ".join(sorted({str(r.get("backend")) for r in records}))
    # records before the median carry no time_statistic: their seconds are the best of the repeats
    statistic = {"median": "medians"}.get(first.get("time_statistic"), "best times")
    repeats = " or ".join(str(n) for n in sorted({r.get("repeats", "?") for r in records}, key=str))
    # workloads whose values are bounds, not per-seed draws, state their own agreement check
    checks = [f"* `{r.get('workload')}` (against {r.get('baseline')}): {r['agreement']}."
              for r in records if r.get("agreement")]
    return [f"`{command}` on {backend} (size `{first.get('size', '?')}`; seconds are the "
            f"{statistic} of {repeats or '?'} repeats), generated by "
            f"`docs/build.py` from `{name}`:", "",
            *_table(["workload", "NumPy s", "compile s", "ldpjax s", "speed-up", "agree",
                     "peak MB NumPy / ldpjax", "RNG floor s", "ldpjax / floor", "generator"],
                    rows),
            *([""] + checks if checks else [])]


RENDERERS = {
    "verdict-summary": verdict_summary,
    "verdict-counts": verdict_counts,
    "verdicts-not-reproduced": verdicts_not_reproduced,
    "reproduce-timing": reproduce_timing,
    "bench": bench,
}


def render(text: str, results: Path) -> str:
    """``text`` with every generated block re-rendered from ``results``."""

    def block(match: re.Match) -> str:
        name = match.group(2)
        if name not in RENDERERS:
            raise ValueError(f"unknown generated block {name!r}; known: {sorted(RENDERERS)}")
        body = "\n".join(RENDERERS[name](results, _options(match.group(3))))
        return f"{match.group(1)}{body}\n{match.group(5)}"

    return BLOCK.sub(block, text)


def fill(results: Path, paths: Iterable[Path], write: bool = True) -> list[Path]:
    """Re-render the blocks of every file in ``paths``; returns the files whose blocks changed
    (written back unless ``write`` is False)."""
    changed = []
    for path in paths:
        text = path.read_text()
        new = render(text, Path(results))
        if new != text:
            changed.append(path)
            if write:
                path.write_text(new)
    return changed
