"""`.ci/run` runs the README's test command as the README writes it, then each tier that
command leaves out (tests/conftest.py, TIERS) as a command of its own, but the tiers named in
NOT_IN_CI, each with its reason, which it does not run: the README says how to run every tier."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import NOT_IN_CI, TIERS

REPO = Path(__file__).resolve().parent.parent


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "-m pytest" in line]


def test_ci_runs_the_readme_s_test_command_and_every_tier_it_keeps():
    readme = (REPO / "README.md").read_text()
    test_command = re.search(r"Run the tests:\s*```bash\n(.+?)\n```", readme).group(1).strip()
    ci = _commands((REPO / ".ci" / "run").read_text())
    assert test_command in ci
    assert set(NOT_IN_CI) < set(TIERS) and all(NOT_IN_CI.values())
    for tier in TIERS:
        runs = f"{test_command} -m {tier}" in ci
        if tier in NOT_IN_CI:
            assert not runs and not any(f"-m {tier}" in c for c in ci), f".ci/run runs {tier}"
        else:
            assert runs, f".ci/run does not run the {tier} tier"
        assert f"pytest -q -m {tier}" in readme, f"the README does not say how to run {tier}"
