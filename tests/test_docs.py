"""The API reference builds with no warning (``python docs/build.py``), and every name the
family pages map to a paper's equations and theorems exists in it."""

from __future__ import annotations

import importlib.util

from tests.conftest import REPO


def _build_module():
    spec = importlib.util.spec_from_file_location("ldpjax_docs_build", REPO / "docs" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_builds_without_warnings(tmp_path):
    build = _build_module()
    problems = build.build(tmp_path / "site")
    assert problems == [], "\n".join(problems)
    site = tmp_path / "site"
    assert (site / "ldpjax" / "accounting.html").is_file()
    for family in ("experts", "quantile", "bandits", "accounting"):
        page = (site / "pages" / f"{family}.html").read_text()
        assert page.count("<a href=\"../ldpjax/") >= 10, family  # names linked into the API


def test_a_broken_name_on_a_family_page_fails_the_build(tmp_path, monkeypatch):
    build = _build_module()
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "broken.md").write_text("# Broken\n\n`ldpjax.accounting.no_such_function`\n")
    monkeypatch.setattr(build, "PAGES", pages)
    out = tmp_path / "out"
    (out / "ldpjax").mkdir(parents=True)
    problems = build._render_pages(out)
    assert len(problems) == 1 and "no_such_function" in problems[0]
