"""The notebooks' first cell installs ldpjax from an existing install, a wheel (next to the
notebook or on Drive), or a pip spec, and otherwise stops with a message saying how."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

NOTEBOOKS = sorted((REPO / "colab").glob("*.ipynb"))


def _install_cell(path) -> str:
    nb = json.loads(path.read_text())
    first = next(c for c in nb["cells"] if c["cell_type"] == "code")
    return "".join(first["source"])


def test_every_notebook_has_the_same_install_cell_and_no_placeholder_url():
    cells = {path.name: _install_cell(path) for path in NOTEBOOKS}
    assert len(cells) == 3 and len(set(cells.values())) == 1
    cell = next(iter(cells.values()))
    assert "<your-fork>" not in cell and "LDPJAX_PIP_SPEC" in cell and "python -m build" in cell


def test_every_notebook_uses_one_set_of_size_names():
    for path in NOTEBOOKS:
        source = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
        for size in ("test", "small", "colab"):
            assert f'"{size}": dict(' in source, (path.name, size)
        assert '"cpu": dict(' not in source, path.name


def _run_cell(monkeypatch, tmp_path, spec="", wheel=False):
    """Run the install cell as if ldpjax were not installed, with pip replaced by a recorder."""
    code = _install_cell(NOTEBOOKS[0]).replace('LDPJAX_PIP_SPEC = ""', f"LDPJAX_PIP_SPEC = {spec!r}")
    code = code.replace('"/content/drive/MyDrive/ldpjax"', repr(str(tmp_path / "drive")))
    monkeypatch.chdir(tmp_path)
    if wheel:
        (tmp_path / "drive").mkdir()
        (tmp_path / "drive" / "ldpjax-0.1.0-py3-none-any.whl").write_bytes(b"")
    calls = []

    def fake_pip(cmd, *args, **kwargs):
        calls.append(cmd[-1])
        monkeypatch.delitem(sys.modules, "ldpjax")  # "installed": the real one imports again
        return 0

    monkeypatch.setitem(sys.modules, "ldpjax", None)  # import ldpjax -> ImportError
    monkeypatch.setattr(subprocess, "check_call", fake_pip)
    namespace: dict = {}
    exec(compile(code, "install-cell", "exec"), namespace)
    return calls


def test_install_cell_order(monkeypatch, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        _run_cell(monkeypatch, tmp_path)
    assert "python -m build --wheel" in str(stop.value) and "LDPJAX_PIP_SPEC" in str(stop.value)
    monkeypatch.undo()
    assert _run_cell(monkeypatch, tmp_path, spec="ldpjax==0.1.0") == ["ldpjax==0.1.0"]
    monkeypatch.undo()
    (tmp_path / "w").mkdir()  # a wheel on Drive wins over the pip spec
    calls = _run_cell(monkeypatch, tmp_path / "w", spec="ldpjax==0.1.0", wheel=True)
    assert calls == [str(tmp_path / "w" / "drive" / "ldpjax-0.1.0-py3-none-any.whl")]
    assert "installed ldpjax" in capsys.readouterr().out
