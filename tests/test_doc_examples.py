"""Every SQL and Python example of the README and docs/analysts.md runs, as written, against a
demo's published copy (`lilo-data/` read as the demo's data folder), with the DuckDB the
install brings: an example that no longer runs fails here, not on an analyst's screen."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = {"README.md": ROOT / "README.md", "docs/analysts.md": ROOT / "docs" / "analysts.md"}
_BLOCK = re.compile(r"^```(sql|python|bash)\n(.*?)^```", re.M | re.S)


def _examples() -> list[tuple[str, str, str]]:
    """(where, language, code): each ```sql and ```python block, and each `python -c`
    command of a ```bash block."""
    found = []
    for name, path in DOCS.items():
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            language, code = match.groups()
            line = text[: match.start()].count("\n") + 1
            where = f"{name}:{line}"
            if language == "bash":
                for command in code.splitlines():
                    if "python -c " in command:
                        source = shlex.split(command.split("python -c ", 1)[1])[0]
                        found.append((where, "python", source))
            else:
                found.append((where, language, code))
    return found


EXAMPLES = _examples()


def test_the_docs_hold_examples_of_both_kinds():
    kinds = {language for _, language, _ in EXAMPLES}
    assert kinds == {"sql", "python"} and len(EXAMPLES) >= 10, EXAMPLES


@pytest.mark.parametrize(("where", "language", "code"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_each_example_runs_on_a_demo_s_published_copy(
    report_demo, monkeypatch, capsys, where, language, code
):
    monkeypatch.chdir(report_demo.parent)  # `lilo-data/...` is the demo's folder from here
    code = code.replace("lilo-data/", f"{report_demo.name}/")
    if language == "python":
        exec(compile(code, where, "exec"), {"__name__": "__doc_example__"})  # noqa: S102
        assert capsys.readouterr().out.strip(), f"{where} printed nothing"
        return
    published = report_demo / "published" / "lilo.duckdb"
    with duckdb.connect(str(published), read_only=True) as con:
        code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("--"))
        for statement in code.split(";"):
            lines = [line for line in statement.splitlines() if line.strip()]
            if all(line.lstrip().startswith("--") for line in lines):
                continue  # nothing, or comments alone
            con.sql(statement).fetchall()
