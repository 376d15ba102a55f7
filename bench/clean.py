"""Cleaner throughput: lilo's cleaner against arxiv-latex-cleaner (PyPI, `pip install
.[bench]`) over the real papers vendored in tests/corpus/papers/, in the same run.

    .venv/bin/python -m bench.clean [--rounds 5]

Both read the same copies in a temporary folder (arxiv-latex-cleaner writes its output
beside its input, and the corpus is read-only to us). MB counts every file of each source
folder. Each tool's best round is reported: the others mostly measure the machine's noise.
The jobs differ: arxiv-latex-cleaner keeps the preamble and writes a cleaned copy of the
whole tree; lilo inlines the inputs and keeps only the body, in memory.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import Settings

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "papers"


def _lilo(settings: Settings) -> Callable[[Path], None]:
    return lambda folder: clean_source(folder, settings.clean) and None


def _arxiv_latex_cleaner() -> Callable[[Path], None]:
    from arxiv_latex_cleaner.arxiv_latex_cleaner import run_arxiv_cleaner

    logging.getLogger().setLevel(logging.ERROR)
    defaults = {  # the command line's defaults
        "resize_images": False,
        "im_size": 500,
        "compress_pdf": False,
        "pdf_im_resolution": 500,
        "images_allowlist": {},
        "keep_bib": False,
        "commands_to_delete": [],
        "commands_only_to_delete": [],
        "environments_to_delete": [],
        "if_exceptions": [],
        "use_external_tikz": None,
        "svg_inkscape": None,
        "convert_png_to_jpg": False,
        "png_quality": 50,
        "png_size_threshold": 0.5,
        "verbose": False,
    }
    return lambda folder: run_arxiv_cleaner({**defaults, "input_folder": str(folder)})


def _best_round(clean: Callable[[Path], None], folders: list[Path], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        for output in folders[0].parent.glob("*_arXiv"):
            shutil.rmtree(output)
        start = time.perf_counter()
        for folder in folders:
            clean(folder)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sources = sorted(p for p in CORPUS.iterdir() if p.is_dir())
    total_mb = sum(f.stat().st_size for p in sources for f in p.rglob("*") if f.is_file()) / 1e6
    with tempfile.TemporaryDirectory(prefix="lilo-bench-") as tmp:
        folders = [Path(shutil.copytree(p, Path(tmp) / p.name)) for p in sources]
        timings = {
            "lilo": _best_round(_lilo(Settings()), folders, args.rounds),
            "arxiv-latex-cleaner": _best_round(_arxiv_latex_cleaner(), folders, args.rounds),
        }
    print(f"{len(folders)} papers, {total_mb:.2f} MB of sources, best of {args.rounds} rounds")
    for name, seconds in timings.items():
        print(
            f"{name:>20}: {seconds:6.3f} s  {len(folders) / seconds:7.1f} papers/s  "
            f"{total_mb / seconds:6.2f} MB/s"
        )
    ratio = timings["arxiv-latex-cleaner"] / timings["lilo"]
    print(f"{'ratio':>20}: lilo is {ratio:.1f}x arxiv-latex-cleaner's MB/s")


if __name__ == "__main__":
    main()
