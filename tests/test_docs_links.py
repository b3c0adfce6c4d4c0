"""Links in the docs resolve: the slug rule, the Markdown source check and the built-site check
of ``docs/links.py`` and the rendering of ``docs/build.py`` (small synthetic sites: fast; the
real site is checked by ``tests/test_docs.py``, whose build runs both checks)."""

from __future__ import annotations

import importlib.util

from tests.conftest import REPO


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"ldpjax_docs_{name}", REPO / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_github_slugs():
    links = _load("links")
    # expected: GitHub's anchors for these headings, by its rule (lower case, punctuation
    # dropped, each space one hyphen, repeats numbered)
    assert links.github_slug("Install on Colab (GPU runtime)") == "install-on-colab-gpu-runtime"
    assert links.github_slug("Privacy guarantees (ldpjax.mechanisms)") == (
        "privacy-guarantees-ldpjaxmechanisms")
    assert links.github_slug("A & B") == "a--b"
    assert links.github_slug("run_json: the schema") == "run_json-the-schema"
    text = "# T `ldpjax.x`\n```\n# code\n```\n## [Link](a.md) *em*\n## T ldpjax.x\n"
    assert links.heading_slugs(text) == ["t-ldpjaxx", "link-em", "t-ldpjaxx-1"]


def test_the_sources_check_finds_missing_files_and_anchors(tmp_path):
    links = _load("links")
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Top\n\n### Install on Colab (GPU runtime)\n")
    page = tmp_path / "docs" / "a.md"
    page.write_text("# A\n\n## Releasing real data\n\n"
                    "[ok](../README.md#install-on-colab-gpu-runtime) [ok](#releasing-real-data) "
                    "[bad](../README.md#install-on-colab) [bad](b.md) [bad](#nowhere) "
                    "[ext](https://example.org/x.md#y) `[code](c.md)`\n```\n[f](d.md)\n```\n")
    problems = links.check_sources([page], tmp_path)
    assert len(problems) == 3, problems
    assert all(p.startswith("docs/a.md: link to ") for p in problems)
    assert {p.split()[3].rstrip(":") for p in problems} == {"../README.md#install-on-colab", "b.md",
                                               "#nowhere"}


def test_the_committed_sources_have_no_broken_link():
    links = _load("links")
    sources = [REPO / "README.md", *sorted((REPO / "docs" / "pages").glob("*.md"))]
    assert links.check_sources(sources, REPO) == []


def _mini_site(tmp_path, monkeypatch):
    """A repo with a README, two pages and a fake API page, rendered as the build renders."""
    build = _load("build")
    pages = tmp_path / "docs" / "pages"
    pages.mkdir(parents=True)
    (tmp_path / "README.md").write_text(
        "# R\n\n[Privacy](docs/pages/privacy.md#privacy-guarantees-ldpjaxmechanisms)\n\n"
        "### Install on Colab (GPU runtime)\n")
    (pages / "index.md").write_text("# Docs\n\n[privacy](privacy.md), [engine](engine.md), "
                                    "[readme](../../README.md)\n")
    (pages / "privacy.md").write_text(
        "# Privacy guarantees (`ldpjax.mechanisms`)\n\n[top](#privacy-guarantees-ldpjaxmechanisms)"
        "\n\n`ldpjax.mechanisms` [limits](#claims--limits)\n\n## Claims & limits\n")
    (pages / "engine.md").write_text(
        "# Engine\n\n[claims](privacy.md#privacy-guarantees-ldpjaxmechanisms) and "
        "[Colab](../../README.md#install-on-colab-gpu-runtime)\n")
    out = tmp_path / "site"
    (out / "ldpjax").mkdir(parents=True)
    (out / "ldpjax" / "mechanisms.html").write_text("<h1 id='x'>API</h1>")
    (out / "ldpjax.html").write_text("<h1>API</h1>")
    monkeypatch.setattr(build, "PAGES", pages)
    monkeypatch.setattr(build, "README", tmp_path / "README.md")
    monkeypatch.setattr(build, "REPO", tmp_path)
    return build, out


def test_rendered_anchors_and_readme_links_resolve(tmp_path, monkeypatch):
    """The anchors the issue found broken: a heading with a linked name, and README sections
    linked from the pages, resolve in the site; every page links back to the landing page."""
    build, out = _mini_site(tmp_path, monkeypatch)
    assert build._render_pages(out) == []
    assert build._render_readme(out) == []
    assert _load("links").check_site(out) == []
    assert build._check_index(out) == []
    privacy = (out / "pages" / "privacy.html").read_text()
    assert '<h1 id="privacy-guarantees-ldpjaxmechanisms"' in privacy
    assert '<h2 id="claims--limits"' in privacy  # GitHub's anchor (markdown2 would say a-b)
    assert 'href="../ldpjax/mechanisms.html"' in privacy
    for page in ("privacy", "engine", "index", "readme"):
        assert "href='../index.html'" in (out / "pages" / f"{page}.html").read_text(), page
    assert 'href="readme.html#install-on-colab-gpu-runtime"' in (
        out / "pages" / "engine.html").read_text()
    assert 'href="pages/privacy.html"' in (out / "index.html").read_text()


def test_the_site_check_fails_on_a_broken_anchor_or_file(tmp_path, monkeypatch):
    build, out = _mini_site(tmp_path, monkeypatch)
    (build.PAGES / "engine.md").write_text(
        "# Engine\n\n[a](privacy.md#privacy-guarantees) [b](missing.md) [c](#engine)\n")
    assert build._render_pages(out) == []
    links = _load("links")
    unrendered = [p for p in links.check_site(out) if "readme.html: no such file" in p]
    assert len(unrendered) == 2  # the README's page is linked from both copies of the index
    assert build._render_readme(out) == []
    problems = links.check_site(out)
    assert len(problems) == 2, problems
    assert "privacy.html#privacy-guarantees: no id" in problems[0]
    assert "missing.md: no such file" in problems[1]
    (build.PAGES / "data.md").write_text("# Data\n")  # a page the landing page does not list
    build._render_pages(out)
    assert build._check_index(out) == [
        "index.md: the landing page does not link to pages/data.html"]
