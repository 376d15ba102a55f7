"""`.ci/run` runs the README's test command as the README writes it, then each tier that
command leaves out (tests/conftest.py, TIERS) by its `-m` (one command may run several,
`-m "slow or real_model"`), but the tiers named in NOT_IN_CI, each with its reason, which it
does not run: the README says how to run every tier."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import NOT_IN_CI, TIERS

REPO = Path(__file__).resolve().parent.parent


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "-m pytest" in line]


def _tiers_run(ci: list[str], test_command: str) -> set[str]:
    """The tiers the commands run: the test command with `-m TIER` or `-m "A or B"`."""
    ran = set()
    for command in ci:
        if command.startswith(f"{test_command} -m "):
            expression = command.removeprefix(f"{test_command} -m ").strip("\"'")
            names = expression.split(" or ")
            assert all(re.fullmatch(r"\w+", n) for n in names), f"not tiers or tiers: {command}"
            ran.update(names)
    return ran


def test_ci_runs_the_readme_s_test_command_and_every_tier_it_keeps():
    readme = (REPO / "README.md").read_text()
    test_command = re.search(r"Run the tests:\s*```bash\n(.+?)\n```", readme).group(1).strip()
    ci = _commands((REPO / ".ci" / "run").read_text())
    assert test_command in ci
    assert set(NOT_IN_CI) < set(TIERS) and all(NOT_IN_CI.values())
    ran = _tiers_run(ci, test_command)
    for tier in TIERS:
        if tier in NOT_IN_CI:
            assert tier not in ran and not any(tier in c for c in ci), f".ci/run runs {tier}"
        else:
            assert tier in ran, f".ci/run does not run the {tier} tier"
        assert f"pytest -q -m {tier}" in readme, f"the README does not say how to run {tier}"
