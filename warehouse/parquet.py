"""Each result version's scores as Parquet (`published/results/version=NNNN/`), written once:
the hand-off to other engines."""

from __future__ import annotations

from pathlib import Path

import duckdb

from lilo.tasks.files import place, temp_path

__all__ = ["write_result_parquet"]


def write_result_parquet(con: duckdb.DuckDBPyConnection, folder: Path, data_dir: Path) -> None:
    """`res_scores` of every result version not yet under `folder`."""
    versions = [r[0] for r in con.execute("SELECT version FROM res_versions").fetchall()]
    for version in versions:
        target = folder / f"version={version:04d}" / "res_scores.parquet"
        if target.exists():
            continue
        tmp = temp_path(data_dir, target.name)
        try:
            con.execute(
                "COPY (SELECT * FROM res_scores WHERE version = ? ORDER BY ALL) "
                "TO ? (FORMAT parquet)",
                [version, str(tmp)],
            )
            place(tmp, target, data_dir)
        finally:
            tmp.unlink(missing_ok=True)
