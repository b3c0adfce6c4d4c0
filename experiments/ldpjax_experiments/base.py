"""Experiment records, the run context handed to experiments, and the registry.

An experiment is a frozen :class:`Experiment` whose ``run(ctx)`` returns an
:class:`ExperimentResult` (tables, figures, a one-paragraph summary, the data it used). Each
module in ``experiments/ldpjax_experiments/`` that defines a module-level ``EXPERIMENT`` (or a tuple
``EXPERIMENTS``) is registered automatically; :func:`register` adds one from anywhere else.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import pkgutil
import sys
import warnings
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax

from ldpjax_experiments.progress import ProgressBar
from ldpjax_experiments.verdicts import Verdict

Table = list[dict[str, Any]]


# --------------------------------------------------------------------------- option parsing
class OptionValueError(argparse.ArgumentTypeError, ValueError):
    """A command-line option value that does not parse; the message is in the user's words
    (argparse shows it as ``--mu expects comma-separated numbers, got 'abc'``)."""


_KIND_WORDS = {"_float": "numbers", "int": "integers", "str": "names"}


def _list_of(kind: Callable[[str], Any]) -> Callable[[str], tuple]:
    words = _KIND_WORDS.get(getattr(kind, "__name__", ""), "values")

    def parse(text: str) -> tuple:
        items = [t.strip() for t in str(text).split(",") if t.strip()]
        try:
            if not items:
                raise ValueError(text)
            return tuple(kind(t) for t in items)
        except (TypeError, ValueError):
            raise OptionValueError(f"expects comma-separated {words}, got {text!r}") from None

    parse.__name__ = f"list[{getattr(kind, '__name__', 'value')}]"
    return parse


def _float(text: str) -> float:
    """A number (``inf`` allowed, ``nan`` not)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise OptionValueError(f"expects a number, got {text!r}") from None
    if value != value:
        raise OptionValueError(f"expects a number, got {text!r}")
    return value


floats = _list_of(_float)
ints = _list_of(int)
strs = _list_of(str)


@dataclasses.dataclass(frozen=True)
class Option:
    """A command-line option of an experiment: ``--name VALUE``.

    ``parse`` turns the text into a value (``float``, ``int``, ``str``, ``floats``, ``ints``,
    ``strs`` or any callable); ``default`` may be overridden per size by ``Experiment.sizes``.
    """

    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse_text(self, text: str) -> Any:
        """``parse(text)``, failures in the user's words (``expects an integer, got 'x'``)."""
        try:
            return self.parse(text)
        except argparse.ArgumentTypeError:
            raise
        except (TypeError, ValueError) as err:
            words = _WORDS.get(self.parse)
            detail = f"expects {words}" if words else f"expects a valid value ({err})"
            raise OptionValueError(f"{detail}, got {text!r}") from None

    def add_to(self, parser: argparse.ArgumentParser, shown: str) -> None:
        """Add ``--flag`` to ``parser`` (``shown``: the defaults per size, for the help)."""
        if self.parse is bool:  # a switch: --fixed-data
            parser.add_argument(self.flag, dest=self.name, action="store_const", const=True,
                                default=None, help=f"{self.help} (default {shown})")
            return

        def parse(text: str) -> Any:
            return self.parse_text(text)

        parse.__name__ = getattr(self.parse, "__name__", "value")
        parser.add_argument(self.flag, dest=self.name, type=parse, default=None,
                            choices=self.choices, help=f"{self.help} (default {shown})")


_WORDS = {int: "an integer", float: "a number", str: "a string"}


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A registered experiment.

    Attributes:
      name: CLI name (``ldpjax run NAME``).
      description: one line for ``ldpjax list``.
      run: ``run(ctx: RunContext) -> ExperimentResult``.
      options: experiment-specific :class:`Option` s.
      sizes: ``{size: {option name: default, ..., "seeds": N}}`` for the sizes ``--size``
        offers (``small`` and ``paper``); a size's values replace the :class:`Option` defaults
        (already parsed values, not text), ``seeds`` is the default ``--seeds``, and an option
        a size leaves out keeps its ``Option.default``. Example:
        ``{"small": {"seeds": 20, "mu": (1.0,)}, "paper": {"seeds": 1000}}``.
      requires: optional check returning None when runnable, else a message saying what is
        missing and how to install it (``run`` exits 2; ``reproduce`` skips with a notice).
      in_reproduce: whether ``ldpjax reproduce`` runs it.
      order: position in ``list`` / ``reproduce``.
      cost: relative running time at the small size; ``reproduce --jobs N`` starts the costliest
        first, so that the longest one does not start last (ldpjax's own: the seconds of one
        cold plus one warm ``reproduce`` on 2 cores, each experiment from its start to its
        files written).
    """

    name: str
    description: str
    run: Callable[[RunContext], ExperimentResult]
    options: tuple[Option, ...] = ()
    sizes: Mapping[str, Mapping[str, Any]] = dataclasses.field(
        default_factory=lambda: {"small": {"seeds": 10}, "paper": {"seeds": 100}}
    )
    requires: Callable[[], str | None] | None = None
    in_reproduce: bool = True
    order: int = 100
    cost: float = 1.0

    def config_for(self, size: str) -> dict[str, Any]:
        if size not in self.sizes:
            raise ValueError(f"size must be one of {sorted(self.sizes)}, got {size!r}")
        config = {opt.name: opt.default for opt in self.options}
        config.update({k: v for k, v in self.sizes[size].items() if k != "seeds"})
        return config

    def seeds_for(self, size: str) -> int:
        return int(self.sizes[size].get("seeds", 1))

    def argument_parser(self, parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser,
                        **kwargs: Any) -> argparse.ArgumentParser:
        """The parser of ``ldpjax run NAME``'s own options (each :class:`Option` once)."""
        kwargs.setdefault("prog", f"ldpjax run {self.name}")
        kwargs.setdefault("description", self.description)
        parser = parser_class(**kwargs)
        for opt in self.options:
            defaults = {size: cfg.get(opt.name, opt.default) for size, cfg in self.sizes.items()}
            opt.add_to(parser, ", ".join(f"{size}: {value}" for size, value in defaults.items()))
        return parser

    def overrides_from(self, argv: list[str], parser: argparse.ArgumentParser | None = None
                       ) -> dict[str, Any]:
        """The options given in ``argv``, parsed once (argparse exits on a bad value)."""
        parser = self.argument_parser() if parser is None else parser
        return {k: v for k, v in vars(parser.parse_args(argv)).items() if v is not None}


@dataclasses.dataclass
class ExperimentResult:
    """What an experiment returns; the runner writes it to disk.

    Attributes:
      tables: name -> list of row dicts (written as ``name.csv`` and ``name.json``).
      figures: name -> matplotlib ``Figure`` (written as ``name.png``).
      summary: one paragraph, printed and saved as ``summary.txt``.
      data: which data the run used (e.g. "real HHS file ..." or "synthetic stand-in ...").
      extra: anything else worth keeping in ``run.json`` (JSON-serialisable).
      verdicts: the run's :class:`~ldpjax_experiments.verdicts.Verdict` s (each with its
        ``data`` and ``kind``). A plugin written before this field that puts
        ``[v.as_dict() ...]`` under ``extra["verdicts"]`` is read through
        :meth:`typed_verdicts`; the runner hands the CLI the result with this field filled.
    """

    tables: dict[str, Table] = dataclasses.field(default_factory=dict)
    figures: dict[str, Any] = dataclasses.field(default_factory=dict)
    summary: str = ""
    data: str = "synthetic (no data files)"
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    verdicts: tuple[Verdict, ...] = ()

    def typed_verdicts(self) -> tuple[Verdict, ...]:
        """``verdicts``, else those under ``extra["verdicts"]`` read once as :class:`Verdict` s."""
        if self.verdicts:
            return tuple(self.verdicts)
        return tuple(Verdict.from_dict(v) for v in self.extra.get("verdicts", None) or ())


@dataclasses.dataclass
class RunContext:
    """Everything an experiment needs to run: its configuration, keys, output folder, devices.

    Use :meth:`key_for` to get an independent key per sub-study and :meth:`simulate` (the
    engine's ``simulate`` with this run's runner -- checkpoints in ``out_dir/chunks``, the
    chunks shared over joined processes (:func:`ldpjax_experiments.checkpointing.checkpointed`) -- progress
    bar and devices).
    """

    name: str
    size: str
    config: dict[str, Any]
    num_seeds: int
    seed: int
    key: jax.Array
    key_impl: str
    out_dir: Path
    show_progress: bool = True
    devices: Any = None
    messages: list[str] = dataclasses.field(default_factory=list)
    rng: str | None = None
    simulate_calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def checkpoint_dir(self) -> Path:
        return self.out_dir / "chunks"

    def key_for(self, label: str) -> jax.Array:
        """A key for one named part of the experiment (stable across runs and processes)."""
        return jax.random.fold_in(self.key, zlib.crc32(label.encode()) & 0x7FFFFFFF)

    def progress(self, total: float, label: str) -> ProgressBar:
        return ProgressBar(total, desc=f"{self.name}: {label}", enabled=self.show_progress)

    def simulate(self, algorithm, params, num_steps=None, *, label: str, **kwargs):
        """``ldpjax.engine.simulate`` with this run's key stream, checkpoints and progress."""
        from ldpjax.engine import simulate
        from ldpjax_experiments.checkpointing import checkpointed

        kwargs.setdefault("num_seeds", self.num_seeds)
        kwargs.setdefault("runner", checkpointed(self.checkpoint_dir))
        kwargs.setdefault("devices", self.devices)
        if self.rng is not None:
            kwargs.setdefault("rng", self.rng)
        key = kwargs.pop("key", None)
        key = self.key_for(label) if key is None else key
        num_seeds = kwargs["num_seeds"]
        steps = num_steps
        if steps is None and kwargs.get("inputs") is not None:
            steps = jax.tree_util.tree_leaves(kwargs["inputs"])[0].shape[0]
        if self.show_progress:  # said before compiling: a cold compile takes seconds
            print(f"[{self.name}] {label}: compiling and running {num_seeds} seeds x "
                  f"{steps or '?'} steps", file=sys.stderr, flush=True)
        with self.progress(num_seeds * (steps or 1), label) as bar:
            kwargs.setdefault("progress", bar.update)
            result = simulate(algorithm, params, key, num_steps, **kwargs)
        # Every call's timing, for run.json (the runner writes ``ctx.simulate_calls``).
        info = result.info
        self.simulate_calls.append({
            "label": label,
            "compile_seconds": round(float(info.compile_seconds), 4),
            "run_seconds": round(float(info.run_seconds), 4),
            "wall_seconds": round(float(info.wall_seconds), 4),
            "compilations": int(info.compilations),
            "rng": info.rng,
            "num_devices": int(info.num_devices),
            "execution": info.execution,
            "grid_shape": list(info.grid_shape),
            "num_seeds": int(info.num_seeds),
            "num_steps": int(info.num_steps),
            "chunks_computed": int(info.chunks_computed),
            "chunks_loaded": int(info.chunks_loaded),
            "privacy_event": _privacy_event_record(algorithm, params),
        })
        return result

    def log(self, message: str) -> None:
        self.messages.append(message)
        print(f"[{self.name}] {message}", file=sys.stderr, flush=True)


def _privacy_event_record(algorithm, params) -> Any:
    """The algorithm's per-record privacy claim at ``params`` (a grid: arrays), for run.json."""
    event_fn = getattr(algorithm, "privacy_event", None)
    if event_fn is None:
        return None
    from ldpjax.accounting import describe

    try:
        return describe(event_fn(params))
    except Exception as err:  # recorded, never fatal: the run itself was validated
        return {"error": f"{type(err).__name__}: {err}"}


# --------------------------------------------------------------------------- registry
_REGISTRY: dict[str, Experiment] = {}
_DISCOVERED = False


def register(experiment: Experiment) -> Experiment:
    """Add an experiment to the registry (replacing one of the same name)."""
    if not isinstance(experiment, Experiment):
        raise TypeError("register() takes an ldpjax_experiments.Experiment")
    _REGISTRY[experiment.name] = experiment
    return experiment


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import ldpjax_experiments as package

    for module_info in pkgutil.iter_modules(package.__path__):
        if module_info.name.startswith("_") or module_info.name in ("base", "runner"):
            continue
        try:
            module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        except Exception as err:  # noqa: BLE001 - one broken module must not hide the others
            warnings.warn(
                f"ldpjax: experiment module {module_info.name!r} failed to import "
                f"({type(err).__name__}: {err}); its experiments are unavailable",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        found = getattr(module, "EXPERIMENTS", ())
        if hasattr(module, "EXPERIMENT"):
            found = (module.EXPERIMENT, *found)
        for experiment in found:
            register(experiment)


def load_plugin(path: str | Path) -> None:
    """Import a Python file of experiments (``ldpjax --plugin FILE``, repeatable).

    The file is run as a fresh module (not on ``sys.path``: its own imports are absolute, e.g.
    ``from ldpjax_experiments import Experiment, ExperimentResult, Option``, and a helper
    module next to it must be importable from the current folder or ``PYTHONPATH``). Its
    module-level ``EXPERIMENT`` / ``EXPERIMENTS`` are registered, as is anything it passes to
    :func:`register` itself.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"plugin file {str(path)!r} does not exist")
    spec = importlib.util.spec_from_file_location(f"ldpjax_plugin_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for experiment in (getattr(module, "EXPERIMENT", None), *getattr(module, "EXPERIMENTS", ())):
        if experiment is not None:
            register(experiment)


def get_experiment(name: str) -> Experiment:
    _discover()
    if name not in _REGISTRY:
        raise KeyError(name)
    return _REGISTRY[name]


def list_experiments() -> list[Experiment]:
    _discover()
    return sorted(_REGISTRY.values(), key=lambda e: (e.order, e.name))


__all__ = [
    "Experiment",
    "ExperimentResult",
    "Option",
    "RunContext",
    "Table",
    "floats",
    "get_experiment",
    "ints",
    "list_experiments",
    "load_plugin",
    "register",
    "strs",
]
