"""`.ci/run` runs the README's test command as the README writes it, then each tier that
command leaves out (tests/conftest.py, TIERS) as a command of its own: a tier is kept in CI."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import TIERS

REPO = Path(__file__).resolve().parent.parent


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "-m pytest" in line]


def test_ci_runs_the_readme_s_test_command_and_every_tier():
    readme = (REPO / "README.md").read_text()
    test_command = re.search(r"Run the tests:\s*```bash\n(.+?)\n```", readme).group(1).strip()
    ci = _commands((REPO / ".ci" / "run").read_text())
    assert test_command in ci
    for tier in TIERS:
        assert f"{test_command} -m {tier}" in ci, f".ci/run does not run the {tier} tier"
        assert f"pytest -q -m {tier}" in readme, f"the README does not say how to run {tier}"
