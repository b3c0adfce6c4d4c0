"""Build the API reference: ``python docs/build.py [-o docs/_build]``.

``python docs/build.py --results docs/results`` first fills the generated blocks of README.md
and ``docs/pages/*.md`` from a run's JSON; ``--check`` (with ``--results``) only compares them
and exits 1 when a committed block differs from what the JSON gives (see ``docs/results.py``).

1. pdoc renders every public module of ``ldpjax`` from its docstrings (Google style) into
   ``docs/_build/`` (open ``docs/_build/index.html``).
2. The hand-written family pages in ``docs/pages/*.md`` (each paper's equations and theorems
   mapped to functions) are rendered next to it (``docs/_build/pages/``); every
   ``ldpjax.x.y`` name they mention in backticks must exist, and becomes a link into the
   reference.

Any warning (an annotation pdoc cannot resolve, a broken name on a family page or in the
README, a module that fails to import) fails the build (exit 1): the test suite runs this
build (``tests/test_docs.py``). Links to ``X.md`` between pages become links to ``X.html``.
"""

from __future__ import annotations

import argparse
import html
import importlib
import importlib.util
import pkgutil
import re
import shutil
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PAGES = HERE / "pages"
EXCLUDED = ("ldpjax._xla",)  # the XLA workaround: internal, documented in its own docstring
README = REPO / "README.md"
NAME = re.compile(r"`(ldpjax(?:\.\w+)+)`")
MD_LINK = re.compile(r"\]\(([\w-]+)\.md(#[^)]*)?\)")


def _results():
    """``docs/results.py`` (the generated blocks), imported by path like this script."""
    spec = importlib.util.spec_from_file_location("ldpjax_docs_results", HERE / "results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _modules() -> list[str]:
    import ldpjax

    names = ["ldpjax"]
    for info in pkgutil.walk_packages(ldpjax.__path__, "ldpjax."):
        if info.name.rsplit(".", 1)[-1] == "__main__" or info.name in EXCLUDED:
            continue
        names.append(info.name)
    return names


def _fix_namedtuple_modules(modules: list[str]) -> None:
    """NamedTuple's generated ``__new__`` claims a fake module (``namedtuple_X``), so pdoc cannot
    resolve its postponed annotations; point it at the module that defines the class."""
    for name in modules:
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields")
                    and obj.__module__ == name):
                new = obj.__new__
                if str(getattr(new, "__module__", "")).startswith("namedtuple_"):
                    new.__module__ = name


def _resolve(dotted: str):
    """The object named ``ldpjax.a.b.c`` and the pdoc page + anchor documenting it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        obj = module
        for attr in parts[cut:]:
            obj = getattr(obj, attr)  # AttributeError: a broken name on a page
        page = "/".join(parts[:cut]) + ".html"
        anchor = ".".join(parts[cut:])
        return obj, page + (f"#{anchor}" if anchor else "")
    raise ImportError(dotted)


def _render_pages(out: Path) -> list[str]:
    import markdown2

    problems: list[str] = []
    target = out / "pages"
    target.mkdir(parents=True, exist_ok=True)
    links = []
    for page in sorted(PAGES.glob("*.md")):
        text = page.read_text()

        def link(match: re.Match, page: Path = page) -> str:
            dotted = match.group(1)
            try:
                _, href = _resolve(dotted)
            except (ImportError, AttributeError) as err:
                problems.append(f"{page.name}: `{dotted}` does not exist ({err})")
                return match.group(0)
            file, _, anchor = href.partition("#")
            target_html = out / file
            if not target_html.is_file() or (
                    anchor and f'id="{anchor}"' not in target_html.read_text()):
                problems.append(f"{page.name}: `{dotted}` is not in the API reference "
                                f"({href}); is it public (in __all__)?")
            return f"[`{dotted}`](../{href})"

        linked = MD_LINK.sub(lambda m: f"]({m.group(1)}.html{m.group(2) or ''})", NAME.sub(link, text))
        body = markdown2.markdown(linked, extras=["tables", "fenced-code-blocks", "header-ids"])
        title = text.splitlines()[0].lstrip("# ").strip() if text.strip() else page.stem
        (target / f"{page.stem}.html").write_text(
            "<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.5}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em}"
            "code{background:#f4f4f4}</style></head><body>"
            "<p><a href='../index.html'>API reference</a> | <a href='index.html'>paper maps</a></p>"
            f"{body}</body></html>"
        )
        links.append((page.stem, title))
    items = "".join(f"<li><a href='{stem}.html'>{html.escape(title)}</a></li>"
                    for stem, title in links if stem != "index")
    if not (target / "index.html").exists():
        (target / "index.html").write_text(
            "<!doctype html><html><head><meta charset='utf-8'><title>ldpjax: paper maps</title>"
            "</head><body><p><a href='../index.html'>API reference</a></p>"
            f"<h1>Paper maps</h1><ul>{items}</ul></body></html>")
    return problems


def build(out: Path) -> list[str]:
    """Build into ``out``; returns the list of problems (empty: success)."""
    import pdoc
    import pdoc.extract
    import pdoc.render

    if out.exists():
        shutil.rmtree(out)
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        modules = _modules()
        _fix_namedtuple_modules(modules)
        pdoc.render.configure(docformat="google", show_source=False, search=True,
                              footer_text="ldpjax API reference")
        specs = ["ldpjax", *(f"!{name}" for name in EXCLUDED)]
        # every public module gets its page, also those the packages' __all__ do not list
        # (their docstrings carry the math; the family pages link to them)
        reached = set(pdoc.extract.walk_specs(specs))
        extra = [m for m in modules if m not in reached
                 and not any(part.startswith("_") for part in m.split(".")[1:])]
        # pdoc documents a package's submodules itself: name only the outermost package
        extra = [m for m in extra if not any(m.startswith(f"{p}.") for p in extra)]
        pdoc.pdoc(*specs, *extra, output_directory=out)
    seen = set()
    for w in caught:
        message = f"{w.category.__name__}: {w.message}"
        if message not in seen:
            seen.add(message)
            problems.append(message)
    problems += _render_pages(out)
    problems += _check_names(README)
    return problems


def _check_names(path: Path) -> list[str]:
    """Every ``ldpjax.x.y`` name in backticks in ``path`` exists."""
    problems = []
    for dotted in sorted(set(NAME.findall(path.read_text()))):
        try:
            _resolve(dotted)
        except (ImportError, AttributeError) as err:
            problems.append(f"{path.name}: `{dotted}` does not exist ({err})")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=HERE / "_build",
                        help="output folder (default docs/_build)")
    parser.add_argument("--results", type=Path, default=None,
                        help="folder with reproduce.json (and bench.json): fill the generated "
                             "blocks of README.md and docs/pages/*.md from it")
    parser.add_argument("--check", action="store_true",
                        help="with --results: do not write or build; exit 1 if a block differs")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    if args.check and args.results is None:
        parser.error("--check needs --results DIR")
    if args.results is not None:
        stale = _results().fill(args.results, [README, *sorted(PAGES.glob("*.md"))],
                                write=not args.check)
        for path in stale:
            verb = "differ from" if args.check else "updated from"
            print(f"docs: {path.relative_to(REPO)}: generated blocks {verb} {args.results}",
                  file=sys.stderr if args.check else sys.stdout)
        if args.check:
            return 1 if stale else 0
    problems = build(args.output)
    for problem in problems:
        print(f"docs: {problem}", file=sys.stderr)
    if problems:
        print(f"docs: {len(problems)} warning(s): build failed", file=sys.stderr)
        return 1
    print(f"docs: built {args.output / 'index.html'} and {args.output / 'pages'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
