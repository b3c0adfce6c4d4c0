"""Run an experiment and write its outputs: tables (CSV + JSON), plots (PNG), run.json."""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from ldpjax.engine.keys import DEFAULT_IMPL, make_key, resolve_impl, resolve_rng
from ldpjax_experiments.base import Experiment, ExperimentResult, RunContext, Table
from ldpjax_experiments.outdir import claim_output_dir
from ldpjax_experiments.verdicts import Verdict, summary_lines

_PACKAGES = ("ldpjax", "jax", "jaxlib", "numpy", "optax", "chex", "matplotlib")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def jax_environment() -> dict[str, Any]:
    devices = jax.devices()
    return {
        "backend": jax.default_backend(),
        "devices": [str(d) for d in devices],
        "device_kind": devices[0].device_kind if devices else None,
        "process_count": jax.process_count(),
        "x64": bool(jax.config.jax_enable_x64),
    }


def _git_commit() -> str | None:
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.ndarray, jax.Array)):
        return _jsonable(np.asarray(value).tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        # NaN is a failed computation, kept apart from None (not run / not applicable: null)
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Path):
        return str(value)
    return value


def _csv_cell(value: Any) -> Any:
    """A CSV cell: NaN (a failed computation) as ``nan``; None (not run) as an empty cell."""
    value = _jsonable(value)
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return ""
    return value


def write_table(directory: Path, name: str, rows: Table) -> list[Path]:
    columns: list[str] = []
    for row in rows:
        for column in row:
            if column not in columns:
                columns.append(column)
    csv_path = directory / f"{name}.csv"
    with open(csv_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _csv_cell(row.get(c)) for c in columns})
    json_path = directory / f"{name}.json"
    json_path.write_text(json.dumps({"columns": columns, "rows": _jsonable(rows)}, indent=1))
    return [csv_path, json_path]


@dataclasses.dataclass(frozen=True)
class RngChoice:
    """The ``--rng`` setting of a run, resolved once (the CLI, the context and run.json read it).

    ``setting``: what the user chose (``"invariant"`` or ``"fast"``, or an implementation
    name); ``engine``: what ``simulate(..., rng=)`` gets (None for ``"invariant"``: the run
    key's own generator, which is the invariant default unless ``--key-impl`` chose another);
    ``impl``: the generator that ``engine`` resolves to for the run key on this backend.
    """

    setting: str
    engine: str | None
    impl: str


def rng_choice(rng: str | None, key: jax.Array) -> RngChoice:
    """Resolve a run's ``rng`` setting (None or ``"invariant"``, ``"fast"``, a name) once."""
    setting = "invariant" if rng is None else str(rng)
    engine = None if setting == "invariant" else setting
    return RngChoice(setting, engine, resolve_rng(engine, key))


def _verdict_lines(verdicts: Sequence[Verdict], summary: str) -> str:
    """The verdicts as text for summary.txt, unless the summary already lists them."""
    if not verdicts:
        return ""
    text = summary_lines(verdicts)
    lines = text.splitlines()
    if all(line in summary for line in lines[1:]):
        return ""
    return text


def configure_jax(*, x64: bool, compile_cache: bool) -> None:
    """Set up this process's JAX as a command asked: float64 (``--x64``) and the persistent
    compilation cache (on unless ``--no-compile-cache``; an unwritable cache folder is
    reported on stderr and does not stop the run)."""
    if x64:
        jax.config.update("jax_enable_x64", True)
    if compile_cache:
        from ldpjax.engine import enable_compile_cache

        try:
            enable_compile_cache()
        except OSError as err:
            print(f"ldpjax: compile cache disabled ({err})", file=sys.stderr)


def _run_and_write(
    experiment: Experiment, out: Path, *, size: str, config: dict[str, Any], num_seeds: int,
    seed: int, key_impl: str, show_progress: bool, command: list[str] | None,
    rng: str | None = None,
) -> tuple[ExperimentResult, dict[str, Any], float]:
    key = make_key(seed, key_impl)
    choice = rng_choice(rng, key)
    ctx = RunContext(
        name=experiment.name,
        size=size,
        config=config,
        num_seeds=num_seeds,
        seed=seed,
        key=key,
        key_impl=key_impl,
        out_dir=out,
        show_progress=show_progress,
        rng=choice.engine,
    )
    started = _dt.datetime.now(_dt.timezone.utc)
    clock = time.perf_counter()
    if show_progress:  # a cold run compiles for a while before any bar can move
        print(f"[{experiment.name}] started ({size}, {num_seeds} seeds) -> {out}",
              file=sys.stderr, flush=True)
    result = experiment.run(ctx)
    wall = time.perf_counter() - clock
    verdicts = result.typed_verdicts()  # read once; Verdict objects from here to the CLI
    result = dataclasses.replace(result, verdicts=verdicts)

    written: list[Path] = []
    for name, rows in result.tables.items():
        written += write_table(out, name, rows)
    for name, figure in result.figures.items():
        path = out / f"{name}.png"
        figure.savefig(path, dpi=120, bbox_inches="tight")
        written.append(path)
    summary = result.summary.strip()
    extra_text = _verdict_lines(verdicts, summary)
    (out / "summary.txt").write_text(summary + "\n" + (f"\n{extra_text}\n" if extra_text else ""))
    run_info = {
        "experiment": experiment.name,
        "description": experiment.description,
        "size": size,
        "config": config,
        "seeds": num_seeds,
        "seed": seed,
        "noise": "simulation: noise replayable from the seed (not a release of real data; "
                 "see ldpjax.mechanisms.secure_key)",
        "key_impl": key_impl,
        "data": result.data,
        "command": command if command is not None else sys.argv,
        "versions": package_versions(),
        "jax": jax_environment(),
        "git_commit": _git_commit(),
        "started_utc": started.isoformat(),
        "wall_seconds": round(wall, 3),
        "outputs": sorted(p.name for p in written) + ["summary.txt"],
        "messages": ctx.messages,
        "verdicts": [v.as_dict() for v in verdicts],  # the one conversion to rows
        "rng": choice.setting,
        "rng_impl": choice.impl,
        "compile_cache": jax.config.jax_compilation_cache_dir or None,
        "compile_seconds": round(sum(c["compile_seconds"] for c in ctx.simulate_calls), 3),
        "run_seconds": round(sum(c["run_seconds"] for c in ctx.simulate_calls), 3),
        "simulate_calls": ctx.simulate_calls,
        # extra["verdicts"]: the same rows, where run.json had them before verdicts were typed
        "extra": {**result.extra, "verdicts": [v.as_dict() for v in verdicts]}
        if verdicts else result.extra,
    }
    (out / "run.json").write_text(json.dumps(_jsonable(run_info), indent=2))
    return result, run_info, wall


def run_experiment(
    experiment: Experiment,
    *,
    size: str = "small",
    seeds: int | None = None,
    out_dir: str | os.PathLike | None = None,
    overrides: dict[str, Any] | None = None,
    seed: int = 0,
    key_impl: str | None = None,
    show_progress: bool = True,
    quiet: bool = False,
    command: list[str] | None = None,
    rng: str | None = None,
) -> tuple[ExperimentResult, Path]:
    """Run one experiment and write everything under ``out_dir`` (default ``results/NAME``)."""
    config = experiment.config_for(size)
    for name, value in (overrides or {}).items():
        if name not in config:
            raise ValueError(f"experiment {experiment.name!r} has no option {name!r}")
        config[name] = value
    num_seeds = experiment.seeds_for(size) if seeds is None else int(seeds)
    if num_seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {num_seeds}")
    key_impl = resolve_impl(DEFAULT_IMPL if key_impl is None else key_impl)
    out = Path(out_dir) if out_dir is not None else Path("results") / experiment.name
    # Checked (folder, writable, free space), created and locked before any computation; a run
    # refused with a ValueError removes the folders it created (see ldpjax_experiments.outdir).
    with claim_output_dir(out):
        result, run_info, wall = _run_and_write(
            experiment, out, size=size, config=config, num_seeds=num_seeds, seed=seed,
            key_impl=key_impl, show_progress=show_progress, command=command, rng=rng,
        )
    if not quiet:
        print(f"\n== {experiment.name} ({size}, {num_seeds} seeds, {wall:.1f} s) -> {out}")
        print(f"Data: {result.data}")
        print((out / "summary.txt").read_text().strip())
    return result, out


__all__ = ["configure_jax", "jax_environment", "package_versions", "run_experiment", "write_table"]
