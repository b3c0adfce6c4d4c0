"""Build the docs site: ``python docs/build.py [-o docs/_build]`` (open ``docs/_build/index.html``).

``python docs/build.py --results docs/results`` first fills the generated blocks of README.md
and ``docs/pages/*.md`` from a run's JSON; ``--check`` (with ``--results``) only compares them
and exits 1 when a committed block differs from what the JSON gives (see ``docs/results.py``).

1. pdoc renders every public module of ``ldpjax`` from its docstrings (Google style) into
   ``docs/_build/`` (the API reference, ``docs/_build/ldpjax.html``).
2. The hand-written pages ``docs/pages/*.md`` are rendered next to it (``docs/_build/pages/``),
   and so is the README (``pages/readme.html``); ``docs/pages/index.md`` is also the site's
   landing page (``docs/_build/index.html``), which must link to every page, to the README and
   to the API reference. Each page starts with a navigation line back to the landing page and
   to the API reference. Every ``ldpjax.x.y`` name a page mentions in backticks must exist, and
   becomes a link into the reference; relative links to a Markdown file become links to its
   rendered page (``engine.md#x`` -> ``engine.html#x``, ``../../README.md#x`` ->
   ``readme.html#x``), and headings get GitHub's anchors, so that an anchor that works on
   GitHub works in the site.
3. ``docs/links.py`` then checks every relative link and ``#anchor`` of the built site and of
   the Markdown sources (README.md and the pages, read as GitHub reads them).

Any warning (an annotation pdoc cannot resolve, a broken name on a page or in the README, a
module that fails to import, a link or anchor that does not resolve) fails the build (exit 1):
the test suite runs this build (``tests/test_docs.py``).
"""

from __future__ import annotations

import argparse
import functools
import html
import importlib
import importlib.util
import os
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
MD_TARGET = re.compile(r"(\[(?:[^\[\]]|\[[^\]]*\])*\])\(([^)\s]+)\)")
HEADING_TAG = re.compile(r'<h([1-6]) id="[^"]*"')


@functools.cache
def _links():
    """``docs/links.py`` (slugs and the link checks), imported by path like this script."""
    spec = importlib.util.spec_from_file_location("ldpjax_docs_links", HERE / "links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.5}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em}"
         "code{background:#f4f4f4}nav{border-bottom:1px solid #ccc;padding-bottom:.3em}")


def _outputs(out: Path) -> dict[Path, list[Path]]:
    """Where each Markdown source is rendered: ``docs/pages/X.md`` -> ``pages/X.html``, the
    README -> ``pages/readme.html``, and ``docs/pages/index.md`` also -> ``index.html`` (the
    landing page)."""
    where = {page.resolve(): [out / "pages" / f"{page.stem}.html"]
             for page in sorted(PAGES.glob("*.md"))}
    where[README.resolve()] = [out / "pages" / "readme.html"]
    index = (PAGES / "index.md").resolve()
    if index in where:
        where[index].insert(0, out / "index.html")
    return where


def _rewrite_links(text: str, source: Path, dest: Path, where: dict[Path, list[Path]]) -> str:
    """Relative links to a rendered Markdown file point at its HTML (from ``dest``)."""
    links = _links()

    def rewrite(match: re.Match) -> str:
        target = match.group(2)
        if links.EXTERNAL.match(target):
            return match.group(0)
        file, hash_, anchor = target.partition("#")
        if not file:
            return match.group(0)
        rendered = where.get((source.parent / file).resolve())
        if not rendered:
            return match.group(0)  # the site check reports it if it does not resolve
        href = os.path.relpath(rendered[-1], dest.parent).replace(os.sep, "/")
        return f"{match.group(1)}({href}{hash_}{anchor})"

    return MD_TARGET.sub(rewrite, text)


def _set_heading_ids(body: str, markdown_text: str, name: str, problems: list[str]) -> str:
    """Give the rendered headings GitHub's anchors (``docs/links.py``), so that an anchor that
    works on GitHub works in the site (markdown2's own ids would also slug the links that
    names in a heading become)."""
    slugs = _links().heading_slugs(markdown_text)
    tags = list(HEADING_TAG.finditer(body))
    if len(tags) != len(slugs):
        problems.append(f"{name}: {len(tags)} rendered headings but {len(slugs)} in the source "
                        "(only '#' headings outside fenced code are supported)")
        return body
    slugs_iter = iter(slugs)
    return HEADING_TAG.sub(lambda m: f'<h{m.group(1)} id="{next(slugs_iter)}"', body)


def _render(source: Path, dest: Path, out: Path, where: dict[Path, list[Path]],
            problems: list[str]) -> str:
    """Render one Markdown file to ``dest``; returns its title."""
    import markdown2

    text = source.read_text()
    base = os.path.relpath(out, dest.parent).replace(os.sep, "/")

    def link(match: re.Match) -> str:
        dotted = match.group(1)
        try:
            _, href = _resolve(dotted)
        except (ImportError, AttributeError) as err:
            problems.append(f"{source.name}: `{dotted}` does not exist ({err})")
            return match.group(0)
        file, _, anchor = href.partition("#")
        target_html = out / file
        if not target_html.is_file() or (
                anchor and f'id="{anchor}"' not in target_html.read_text()):
            problems.append(f"{source.name}: `{dotted}` is not in the API reference "
                            f"({href}); is it public (in __all__)?")
        return f"[`{dotted}`]({base}/{href})"

    linked = _link_names(_rewrite_links(text, source, dest, where), link)
    body = markdown2.markdown(linked, extras=["tables", "fenced-code-blocks", "header-ids"])
    body = _set_heading_ids(body, text, source.name, problems)
    title = text.splitlines()[0].lstrip("# ").replace("`", "").strip() if text.strip() \
        else source.stem
    nav = (f"<nav><a href='{base}/index.html'>ldpjax documentation</a> | "
           f"<a href='{base}/ldpjax.html'>API reference</a></nav>")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"{nav}{body}</body></html>")
    return title


def _link_names(text: str, link) -> str:
    """Backticked ``ldpjax.x.y`` names become links, except in headings and fenced code."""
    out, fenced = [], False
    for line in text.splitlines(keepends=True):
        if _links().FENCE.match(line):
            fenced = not fenced
        elif not fenced and not line.startswith("#"):
            line = NAME.sub(link, line)
        out.append(line)
    return "".join(out)


def _render_pages(out: Path) -> list[str]:
    """Render ``docs/pages/*.md`` into ``out/pages`` and ``index.md`` as the landing page."""
    problems: list[str] = []
    where = _outputs(out)
    titles = {}
    for source, dests in where.items():
        if source == README.resolve():
            continue  # rendered by _render_readme
        for dest in dests:
            titles[source] = _render(source, dest, out, where, problems)
    if (PAGES / "index.md").resolve() not in where:  # no landing page written: list the pages
        items = "".join(f"<li><a href='pages/{s.stem}.html'>{html.escape(t)}</a></li>"
                        for s, t in titles.items())
        (out / "index.html").write_text(
            "<!doctype html><html><head><meta charset='utf-8'><title>ldpjax documentation"
            "</title></head><body><p><a href='ldpjax.html'>API reference</a></p>"
            f"<h1>ldpjax documentation</h1><ul>{items}</ul></body></html>")
    return problems


def _check_index(out: Path) -> list[str]:
    """The landing page links to every page, to the README's page and to the API reference."""
    text = (out / "index.html").read_text()
    wanted = [f"pages/{page.stem}.html" for page in sorted(PAGES.glob("*.md"))
              if page.stem != "index"] + ["pages/readme.html", "ldpjax.html"]
    return [f"index.md: the landing page does not link to {href}" for href in wanted
            if not re.search(rf"""href=["'](?:\./)?{re.escape(href)}["'#]""", text)]


def _render_readme(out: Path) -> list[str]:
    """Render README.md into ``out/pages/readme.html`` (the pages link to its sections)."""
    problems: list[str] = []
    where = _outputs(out)
    _render(README, where[README.resolve()][0], out, where, problems)
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
    problems += _render_readme(out)
    problems += _check_names(README)
    problems += _check_index(out)
    links = _links()
    problems += links.check_site(out)
    problems += links.check_sources([README, *sorted(PAGES.glob("*.md"))], REPO)
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
