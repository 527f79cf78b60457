"""The front door: the README stays short and its links resolve; CI runs its two commands."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_readme_is_short_and_its_links_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= 12 * 1024, f"README.md is {len(readme.encode())} bytes; keep it under 12 KiB"
    links = re.findall(r"\]\(([^)#]+)\)", readme)
    assert links
    for link in links:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def anchors(page: Path) -> set:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces as -)."""
    return {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", page.read_text(), re.M)}


def test_results_holds_current_figures_and_its_links_resolve():
    """benchmarks/RESULTS.md is the current figures; the measurements behind them live in
    docs/findings.md, so RESULTS.md stays short enough to read. Its links and theirs, anchors
    included, lead somewhere."""
    results_page = ROOT / "benchmarks" / "RESULTS.md"
    results = results_page.read_text()
    assert len(results.encode()) <= 32 * 1024, f"RESULTS.md is {len(results.encode())} bytes; keep it under 32 KiB"
    for page in (results_page, ROOT / "docs" / "findings.md"):
        for target, anchor in re.findall(r"\]\(([^)#:]*)(?:#([^)]+))?\)", page.read_text()):
            linked = (page.parent / target).resolve() if target else page
            assert linked.exists(), f"{page.name} links to {target}, which does not exist"
            if anchor and linked.suffix == ".md":
                assert anchor in anchors(linked), f"{page.name} links to {target}#{anchor}, a heading it lacks"


def test_docs_links_resolve():
    for page in sorted((ROOT / "docs").glob("*.md")):
        for link in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
            assert (page.parent / link).exists(), f"{page.name} links to {link}, which does not exist"


def test_ci_runs_exactly_the_readmes_install_and_test_commands():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", readme, re.S)
    install, test = blocks[0].strip(), blocks[1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert install in ci and test in ci


def test_importing_an_unbuilt_tree_says_how_to_build(tmp_path):
    """A copy of the package without its compiled extension: the ImportError names the cause and
    the build command (not a "circular import")."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(ROOT / "cutlass_ops", tmp_path / "cutlass_ops",
                    ignore=shutil.ignore_patterns("*.so", "_build_info.py", "__pycache__"))
    # Loaded from its path, an editable install's finder set aside: it would hand back the built tree.
    code = ("import importlib.util, sys; p = sys.argv[1]; "
            "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in str(getattr(f, '__module__', ''))]; "
            "spec = importlib.util.spec_from_file_location('cutlass_ops', p + '/__init__.py', "
            "submodule_search_locations=[p]); m = importlib.util.module_from_spec(spec); "
            "sys.modules['cutlass_ops'] = m; spec.loader.exec_module(m)")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cutlass_ops")], capture_output=True, text=True)
    assert result.returncode != 0
    assert "cutlass_ops is not built" in result.stderr and "--no-build-isolation" in result.stderr
    assert "circular import" not in result.stderr.splitlines()[-1]


def test_the_command_line_helps_without_the_extension(tmp_path):
    """`python -m cutlass_ops --help` and `--version` work in a tree without the compiled
    extension; a command that needs it exits 1 with the build instructions."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(ROOT / "cutlass_ops", tmp_path / "cutlass_ops",
                    ignore=shutil.ignore_patterns("*.so", "_build_info.py", "__pycache__"))
    # As `python -m cutlass_ops ARGS` would start, with the copy first on the path and an editable
    # install's finder set aside (it would hand back the built tree).
    code = ("import runpy, sys; sys.path.insert(0, sys.argv[1]); "
            "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in str(getattr(f, '__module__', ''))]; "
            "sys.argv = ['-m'] + sys.argv[2:]; sys.orig_argv = [sys.executable, '-m', 'cutlass_ops'] + sys.argv[1:]; "
            "runpy.run_module('cutlass_ops', run_name='__main__', alter_sys=True)")

    def cli(*args):
        return subprocess.run([sys.executable, "-c", code, str(tmp_path), *args], capture_output=True, text=True)

    helped = cli("--help")
    assert helped.returncode == 0 and "profile" in helped.stdout and "sweep" in helped.stdout, helped.stderr
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("cutlass_ops "), version.stderr
    info = cli("info")
    assert info.returncode == 1 and "cutlass_ops is not built" in info.stderr and "--no-build-isolation" in info.stderr


@pytest.mark.parametrize("argv", [["bench", "--quick", "--plot", "x.png"], ["evaluate", "no_such_folder", "--plot", "x.png"],
                                  ["profile", "no_such_file.py:f", "--plot", "x.png"]])
def test_plot_without_matplotlib_stops_before_any_work(argv, monkeypatch, capsys):
    """Every command's --plot checks for matplotlib first (not after a long run)."""
    import sys

    from cutlass_ops import __main__ as cli

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    assert cli.main(argv) == 2
    assert "--plot needs matplotlib" in capsys.readouterr().err


def test_the_explain_walkthrough_runs_without_a_gpu():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, str(ROOT / "examples" / "explain_walkthrough.py")], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("   runs: ") == 4 and "us  " in result.stdout


def test_results_tables_are_current(tmp_path):
    """README's verdict and RESULTS.md's test-split tables are what the evaluation files give
    (`python -m cutlass_ops results` rewrites them); a block edited by hand, or a refit without
    regenerating, fails here. The renderer is checked against a stale copy too."""
    from cutlass_ops.calibration import results

    assert results.update(check=True) == [], "run python -m cutlass_ops results"
    readme = (ROOT / "README.md").read_text()
    stale = results.replace_block(readme, "verdict", "| dtype | stale |")
    assert "| dtype | stale |" in stale and stale != readme
    with pytest.raises(ValueError, match="no block"):
        results.replace_block("no markers here", "verdict", "x", "README.md")
    # The README's rows are the single products (model, random and long-K groups), per precision.
    groups = json.loads(results.TEST_SPLIT.read_text())
    bf16 = results.single_products(groups, "bf16")
    assert bf16["problems"] == sum(groups[f"bf16 {family}"]["problems"] for family in ("model", "random", "long-k"))
    speed = f"{bf16['vs_torch_geomean']:.2f}x"
    speed = f"**{speed}**" if bf16["vs_torch_geomean"] >= 1.0 else speed  # at or above torch.mm: bold
    assert f"| bfloat16 | {bf16['problems']} | {speed} |" in readme
