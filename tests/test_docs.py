"""The front door: the README stays short and its links resolve; CI runs its two commands."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_is_short_and_its_links_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= 12 * 1024, f"README.md is {len(readme.encode())} bytes; keep it under 12 KiB"
    links = re.findall(r"\]\(([^)#]+)\)", readme)
    assert links
    for link in links:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


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
