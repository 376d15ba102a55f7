"""`lilo clean PATH`: clean one paper's LaTeX source (a folder or an e-print archive) with the
pipeline's own cleaner and print the result. Nothing is written outside a temporary folder
(under the data dir's `tmp/`)."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from lilo.flows.cli._args import add_common_args
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._settings import settings_from_args

__all__ = ["register"]


def cmd_clean(args: argparse.Namespace) -> int:
    from lilo.tasks.clean import clean_folder, clean_paper
    from lilo.tasks.printable import printable
    from lilo.tasks.records import PaperText, RawSource

    path = Path(args.path)
    if not path.exists():
        raise CLIError(f"{path} does not exist: give a source folder or an e-print archive")
    settings = settings_from_args(args)
    if path.is_dir():
        raw = RawSource(path.name, "", str(path), 0, "folder")
        result = clean_folder(path, raw, settings.clean)
    else:
        from lilo.tasks.fetch import detect_format
        from lilo.tasks.files import FileTooLarge, read_bounded

        try:
            data = read_bounded(path, settings.arxiv.max_eprint_bytes)
        except FileTooLarge as exc:
            raise CLIError(f"{exc}: give a source folder or an e-print") from exc
        sha = hashlib.sha256(data).hexdigest()
        raw = RawSource(path.name, sha, str(path), len(data), detect_format(data))
        from lilo.tasks.files import temp_dir

        with temp_dir(settings.data_dir, "clean") as work:
            result = clean_paper(raw, Path(work), settings.clean)
    # The paper's text and what the cleaner says of it quote the paper: printable.
    if not isinstance(result, PaperText):
        print(
            printable(f"quarantined {path}: {result.reason}: {result.detail}", one_line=True),
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(printable(json.dumps(_as_json(result), ensure_ascii=False)))
    else:
        for warning in result.warnings:
            print(f"warning: {printable(warning, one_line=True)}", file=sys.stderr)
        sys.stdout.write(printable(result.text))
    return 0


def _as_json(paper: Any) -> dict[str, Any]:
    fields = ("main_file", "title", "words", "tokens", "cleaner_version", "content_sha256")
    return {
        **{name: getattr(paper, name) for name in fields},
        "warnings": list(paper.warnings),
        "removed": paper.removed,
        "text": paper.text,
    }


def register(sub: Any) -> None:
    clean = sub.add_parser(
        "clean",
        help="clean one paper's LaTeX source (folder or e-print archive) and print it",
        description="Exit 0 with the cleaned text; a quarantined input exits 1 with its reason. "
        "Control characters in the paper are printed as \\uXXXX (they are kept as they are in "
        "the warehouse).",
    )
    clean.add_argument("path", help="a source folder, or an e-print (.tar.gz, .tar, .gz, .tex)")
    clean.add_argument("--json", action="store_true", help="one JSON object instead of the text")
    add_common_args(clean)
    clean.set_defaults(func=cmd_clean)
