"""The API reference builds with no warning (``python docs/build.py``), every name the pages
map to a paper's equations and theorems exists in it, the generated blocks match the committed
results (``--results docs/results --check``), and the code of the README's quickstart, of
the "write your own algorithm" page and (slow) of the budget-optimisation page runs."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil

import pytest

from tests.conftest import REPO

SCHEDULE_FIRST = 2  # long: pytest-xdist starts it early (tests/plugins/schedule.py)


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"ldpjax_docs_{name}", REPO / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_module():
    return _load("build")


def test_api_reference_builds_without_warnings(tmp_path):
    build = _build_module()
    problems = build.build(tmp_path / "site")
    assert problems == [], "\n".join(problems)
    site = tmp_path / "site"
    assert (site / "ldpjax" / "accounting.html").is_file()
    for family in ("experts", "quantile", "bandits", "accounting"):
        page = (site / "pages" / f"{family}.html").read_text()
        assert page.count("<a href=\"../ldpjax/") >= 10, family  # names linked into the API
    index = (site / "pages" / "index.html").read_text()
    assert 'href="engine.html"' in index  # links between pages point at the rendered pages
    # the site's front page is the landing page (docs/pages/index.md), not a redirect to the
    # API reference; the build's own checks (no problem above) found every page linked from
    # it and every link and #anchor of the site resolving (docs/links.py)
    landing = (site / "index.html").read_text()
    assert "http-equiv" not in landing and 'href="pages/references.html"' in landing
    assert 'id="privacy-guarantees-ldpjaxmechanisms"' in (site / "pages" / "privacy.html").read_text()


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
    readme = tmp_path / "README.md"
    readme.write_text("`ldpjax.engine.simulate` and `ldpjax.engine.no_such_thing`\n")
    problems = build._check_names(readme)
    assert len(problems) == 1 and "no_such_thing" in problems[0]


def test_committed_generated_blocks_match_the_results():
    """`python docs/build.py --results docs/results --check` passes on the committed docs."""
    assert _build_module().main(["--results", str(REPO / "docs" / "results"), "--check"]) == 0


def test_check_fails_on_a_stale_block_and_fill_repairs_it(tmp_path, monkeypatch, capsys):
    build, results = _build_module(), _load("results")
    pages = tmp_path / "pages"
    pages.mkdir()
    page = pages / "page.md"
    page.write_text("# Page\n\n<!-- generated: verdict-summary experiments=demo -->\n"
                    "| demo | stale-count | 0 | 0 |\n<!-- end generated -->\n\n"
                    "<!-- generated: verdicts-not-reproduced -->\n<!-- end generated -->\n"
                    "<!-- generated: bench -->\n<!-- end generated -->\n")
    readme = tmp_path / "README.md"
    readme.write_text("# R\n")
    monkeypatch.setattr(build, "PAGES", pages)
    monkeypatch.setattr(build, "README", readme)
    monkeypatch.setattr(build, "REPO", tmp_path)
    data = REPO / "docs" / "results"
    assert build.main(["--results", str(data), "--check"]) == 1
    assert "page.md" in capsys.readouterr().err
    assert results.fill(data, [page]) == [page]  # writes the page
    assert build.main(["--results", str(data), "--check"]) == 0
    text = page.read_text()
    assert "| `demo` | " in text and "stale-count" not in text  # the row, re-rendered
    assert "| `experts-covid` |" in text  # the table of verdicts that are not reproduced
    # without bench.json the bench block says how to make one
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(data / "reproduce.json", folder / "reproduce.json")
    results.fill(folder, [page])
    assert "No `bench.json`" in page.read_text()


def test_the_reproduce_timing_block_reads_the_run(tmp_path):
    results = _load("results")
    base = {"command": ["ldpjax", "reproduce"], "size": "small", "jobs": 2, "verdicts": [],
            "experiments": [{"experiment": "demo", "status": "ok", "wall_seconds": 0.4}]}
    (tmp_path / "reproduce.json").write_text(json.dumps(base))
    assert "records no run time" in results.reproduce_timing(tmp_path, {})[0]
    for entries, state in ((0, "cold: empty compile cache"),
                           (577, "warm: 577 compile-cache files at the start"),
                           (None, "compile cache off")):
        (tmp_path / "reproduce.json").write_text(json.dumps(dict(
            base, wall_seconds=42.56, cpu_seconds=81.7, cores=2,
            compile_cache_entries_at_start=entries)))
        lines = results.reproduce_timing(tmp_path, {})
        assert lines[0].startswith("`ldpjax reproduce` (size `small`, 2 worker(s) on 2 cores, "
                                   f"{state}): **42.56 s** wall, 81.7 s of CPU time")
        assert "| `demo` | ok | 0.4 |" in lines
        brief = results.reproduce_timing(tmp_path, {"brief": "1"})
        assert len(brief) == 1 and f"2 worker(s) on 2 cores, {state}), took **42.56 s**" in brief[0]


def _python_blocks(path) -> str:
    return "\n".join(re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL))


def test_the_write_your_own_algorithm_page_runs():
    """The page's python blocks, in order, as one script (small sizes)."""
    code = _python_blocks(REPO / "docs" / "pages" / "write-your-own-algorithm.md")
    assert "check_conformance" in code and "simulate" in code
    exec(compile(code, "write-your-own-algorithm.md", "exec"), {"__name__": "docs_page"})


@pytest.mark.slow  # compiles 1,000 Adam steps through the accountant: ~20 s cold, 6 s warm
def test_the_budget_optimisation_page_runs():
    """The page's python blocks, in order, as one script: optax through the accountant, its
    checks (the claim holds at the optimum, the paper's water-filling agrees) are asserts."""
    code = _python_blocks(REPO / "docs" / "pages" / "budget-optimisation.md")
    assert "optax" in code and "A.epsilon" in code and "assert claim <= target" in code
    exec(compile(code, "budget-optimisation.md", "exec"), {"__name__": "docs_page"})


def test_the_budget_optimisation_page_compiles_and_is_linked():
    """Fast representative of the page test above: its code compiles, it checks the claim with
    the accountant on concrete numbers, and the README links it."""
    code = _python_blocks(REPO / "docs" / "pages" / "budget-optimisation.md")
    compile(code, "budget-optimisation.md", "exec")
    assert "jax.grad(lagrangian)" in code and "assert claim <= target" in code
    assert "(docs/pages/budget-optimisation.md)" in (REPO / "README.md").read_text()


def test_the_readme_quickstart_runs():
    """The README's Python quickstart (its first python block) runs as written."""
    text = (REPO / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.DOTALL)[0]
    assert "product_grid" in code and "simulate" in code and "epsilon" in code
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
