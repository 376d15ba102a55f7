"""`lilo corpus` and `lilo mirror`: the synthetic corpus and the loopback arXiv serving it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lilo.flows.cli._args import add_common_args
from lilo.flows.cli._settings import settings_from_args

__all__ = ["register"]


def _corpus(args: argparse.Namespace, given: str | None) -> Path:
    """The folder given, else the demo's own (`DATA_DIR/demo-corpus`)."""
    return Path(given) if given else settings_from_args(args).data_dir / "demo-corpus"


def cmd_corpus(args: argparse.Namespace) -> int:
    from lilo.tasks.synthetic import write_corpus

    out = _corpus(args, args.out)
    manifest = write_corpus(out)
    print(f"wrote {len(manifest.items)} e-prints and manifest.json to {out}")
    return 0


def cmd_mirror(args: argparse.Namespace) -> int:
    from lilo.tasks.synthetic import serve_forever, write_corpus

    corpus = _corpus(args, args.corpus)
    if not (corpus / "manifest.json").exists():
        write_corpus(corpus)
        print(f"wrote the synthetic corpus to {corpus}")
    print(
        f"serving {corpus} at http://{args.host}:{args.port}/ (Atom API: /api/query, "
        "e-prints: /e-print/<id>). Point the pipeline at it with\n"
        f"  LILO_ARXIV__API_URL=http://{args.host}:{args.port}/api/query "
        f"LILO_ARXIV__EPRINT_URL=http://{args.host}:{args.port}/e-print/\n"
        "Ctrl-C stops."
    )
    try:
        serve_forever(corpus, args.host, args.port)
    except KeyboardInterrupt:
        pass
    return 0


def register(sub: Any) -> None:
    corpus = sub.add_parser(
        "corpus",
        help="write the synthetic demo corpus to a folder",
        description="Writes the corpus `lilo demo` runs on: a survey and its papers as arXiv "
        "e-print archives, some of them hostile on purpose (a PDF-only e-print, an archive "
        "escaping its folder, a non-UTF-8 file, a too-short paper), and manifest.json with "
        "the facts planted in each paper. `lilo mirror` serves it.",
    )
    corpus.add_argument(
        "out", nargs="?", metavar="DIR", help="the folder (default: DATA_DIR/demo-corpus)"
    )
    add_common_args(corpus)
    corpus.set_defaults(func=cmd_corpus)

    mirror = sub.add_parser(
        "mirror",
        help="serve a corpus as a loopback arXiv mirror",
        description="Serves a corpus folder (written first when it has no manifest.json) as "
        "arXiv's Atom API (/api/query) and e-print downloads (/e-print/<id>), and prints the "
        "two settings that point the pipeline at it. Ctrl-C stops it.",
    )
    mirror.add_argument(
        "--corpus", metavar="DIR", help="corpus folder (default: DATA_DIR/demo-corpus)"
    )
    mirror.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1: this machine only)",
    )
    mirror.add_argument(
        "--port", type=int, default=8008, help="the port to listen on (default 8008)"
    )
    add_common_args(mirror)
    mirror.set_defaults(func=cmd_mirror)
