"""How long `lilo` takes to exit after its last line: a small offline demo (one sample,
Single at 300 words) run as the installed command runs it (`console_main`, which collects
once and freezes what is left before the interpreter's exit), against the same command as
`main()` alone, in the same run, alternating.

    .venv/bin/python -m bench.command_exit [--runs 3]

Each run has a data dir of its own; all share one temporary PREFECT_HOME (Prefect's
temporary server on it), removed at the end. Prints, per kind, the median seconds from the
last line the command printed to its exit and the whole run's, and last
`ratio=<console exit / main exit>`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEMO = ["demo", "--methods", "single", "--target-words", "300"]
DEMO += ["--set", "samples.target_samples=1"]
KINDS = {
    "console": ["-m", "lilo.flows.cli"],
    "main": ["-c", "from lilo.flows.cli import main; raise SystemExit(main())"],
}


def _run(kind: str, data: Path, env: dict[str, str]) -> tuple[float, float]:
    """The seconds from the command's last line to its exit, and from its start."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, *KINDS[kind], *DEMO, "--data-dir", str(data)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    last = started
    for _ in process.stdout or []:
        last = time.monotonic()
    if process.wait() != 0:
        raise SystemExit(f"the {kind} run failed (exit {process.returncode})")
    ended = time.monotonic()
    return ended - last, ended - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lilo-bench-exit-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
        env.update(PREFECT_HOME=str(root / "prefect"), PREFECT_SERVER_ANALYTICS_ENABLED="false")
        _run("main", root / "warm-up", env)  # Prefect's database migrated once, not timed
        times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
        for n in range(args.runs):
            for kind in KINDS:
                times[kind].append(_run(kind, root / f"{kind}-{n}", env))
    medians = {}
    for kind, runs in times.items():
        medians[kind] = statistics.median(exit_s for exit_s, _ in runs)
        whole = statistics.median(total for _, total in runs)
        print(f"{kind:8} exit after the last line {medians[kind]:5.2f} s, whole run {whole:5.1f} s")
    print(f"ratio={medians['console'] / medians['main']:.2f}")


if __name__ == "__main__":
    main()
