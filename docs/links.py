"""Link checks for the docs: the Markdown sources and the built site (``docs/build.py``).

Two checks, both returning a list of problems (empty: every link resolves):

* :func:`check_sources` reads README.md and ``docs/pages/*.md`` as GitHub shows them: every
  relative link must name a file that exists (relative to the linking file) and every
  ``#anchor`` must be the slug of a heading of its target (:func:`heading_slugs`, GitHub's rule:
  the heading's text, lower-cased, punctuation dropped, each space a hyphen, ``-1``, ``-2``, ...
  on repeats).
* :func:`check_site` reads every HTML file of a built site: every relative ``href`` / ``src``
  must name a file of the site and every ``#anchor`` an ``id`` (or ``name``) in it.

``docs/build.py`` gives each rendered heading the same slug as GitHub, so an anchor that works
in the sources works in the site. Imported by path, like ``docs/results.py``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

__all__ = ["check_site", "check_sources", "github_slug", "heading_slugs", "headings"]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(r"(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.*?)\1")
HREF = re.compile(r"""\b(?:href|src)\s*=\s*(["'])(.*?)\1""", re.IGNORECASE)
ID = re.compile(r"""\b(?:id|name)\s*=\s*(["'])(.*?)\1""", re.IGNORECASE)
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)
SCRIPT = re.compile(r"<script\b.*?</script>", re.IGNORECASE | re.DOTALL)


def github_slug(text: str) -> str:
    """GitHub's anchor for a heading whose rendered text is ``text``.

    Lower-case; drop every character that is not a letter, digit, mark, space, ``-`` or ``_``;
    each space becomes ``-`` (runs are not merged).

    >>> github_slug("Privacy guarantees (ldpjax.mechanisms)")
    'privacy-guarantees-ldpjaxmechanisms'
    >>> github_slug("2. A sweep: 4 budgets x 200 seeds, one compilation")
    '2-a-sweep-4-budgets-x-200-seeds-one-compilation'
    """
    kept = [c for c in text.lower()
            if c in " -_" or unicodedata.category(c)[0] in "LNM"]
    return "".join(kept).replace(" ", "-")


def _plain(heading: str) -> str:
    """The text a heading renders to: code spans unquoted, link text kept, emphasis dropped."""
    out, last = [], 0
    for match in CODE_SPAN.finditer(heading):
        out.append(_plain_prose(heading[last:match.start()]))
        out.append(match.group(2).strip())
        last = match.end()
    out.append(_plain_prose(heading[last:]))
    return html.unescape("".join(out)).strip()


def _plain_prose(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) -> text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    return text.replace("*", "").replace("\\", "")


def headings(markdown: str) -> list[str]:
    """The rendered text of each ATX heading (``#`` ... ``######``) outside fenced code."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced or line.startswith("    ") else HEADING.match(line)
        if match:
            found.append(_plain(match.group(2)))
    return found


def heading_slugs(markdown: str) -> list[str]:
    """The anchors of ``markdown``'s headings, in order, repeats suffixed ``-1``, ``-2``, ...

    >>> heading_slugs("# A\\n\\n## B `c.d`\\n\\n```\\n# not a heading\\n```\\n## A\\n")
    ['a', 'b-cd', 'a-1']
    """
    seen: dict[str, int] = {}
    slugs = []
    for text in headings(markdown):
        base = github_slug(text)
        slug = base
        while slug in seen:
            seen[base] += 1
            slug = f"{base}-{seen[base]}"
        seen.setdefault(slug, 0)
        slugs.append(slug)
    return slugs


def _links(markdown: str) -> list[str]:
    """The inline link and image targets of ``markdown`` outside fenced code and code spans."""
    targets, fenced = [], False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = CODE_SPAN.sub("", line)
        targets += INLINE_LINK.findall(line) + IMAGE_LINK.findall(line)
    return targets


def check_sources(paths: list[Path], root: Path) -> list[str]:
    """Broken relative links and anchors in the Markdown files ``paths`` (as GitHub reads them).

    ``root`` only shortens the names in the messages.
    """
    problems = []
    slugs: dict[Path, set[str]] = {}

    def anchors(path: Path) -> set[str]:
        if path not in slugs:
            slugs[path] = set(heading_slugs(path.read_text()))
        return slugs[path]

    for path in paths:
        name = path.resolve().relative_to(root.resolve()) if path.is_relative_to(root) else path
        for target in _links(path.read_text()):
            if EXTERNAL.match(target):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / unquote(file)).resolve() if file else path.resolve()
            if not dest.exists():
                problems.append(f"{name}: link to {target}: no file {file}")
            elif anchor and dest.suffix == ".md" and unquote(anchor) not in anchors(dest):
                problems.append(f"{name}: link to {target}: no heading with anchor #{anchor} "
                                f"in {dest.name}")
    return problems


def check_site(out: Path) -> list[str]:
    """Broken relative links and anchors in every HTML file under the built site ``out``."""
    problems = []
    ids: dict[Path, set[str]] = {}

    def anchors(path: Path) -> set[str]:
        if path not in ids:
            ids[path] = {html.unescape(m.group(2)) for m in ID.finditer(path.read_text())}
        return ids[path]

    out = out.resolve()
    for page in sorted(out.rglob("*.html")):
        for match in HREF.finditer(SCRIPT.sub("", page.read_text())):
            target = html.unescape(match.group(2))
            if not target or EXTERNAL.match(target):
                continue
            file, _, anchor = target.partition("#")
            file = file.partition("?")[0]
            dest = (page.parent / unquote(file)).resolve() if file else page
            if dest.is_dir():
                dest = dest / "index.html"
            where = page.relative_to(out)
            if not dest.is_file() or not dest.is_relative_to(out):
                problems.append(f"site {where}: link to {target}: no such file in the site")
            elif anchor and dest.suffix == ".html" and unquote(anchor) not in anchors(dest):
                problems.append(f"site {where}: link to {target}: no id {anchor} in "
                                f"{dest.relative_to(out)}")
    return problems
