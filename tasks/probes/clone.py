"""Reading a clone of the authors' repository (nelson-liu/lost-in-the-middle): whatever of
`kv_retrieval_data/` and `qa_data/` it holds, each line checked, as probe items; its prompt
templates. A clone may lack the large 10/20/30-document files or the 300-key file: what is
absent is said, not an error. Nothing is copied anywhere but the warehouse."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lilo.tasks.errors import InputError
from lilo.tasks.files import FileTooLarge, HardLinked, LinkOutside, open_within
from lilo.tasks.probe_records import ProbeItem
from lilo.tasks.probes.kinds import kv, mdqa
from lilo.tasks.probes.prompts import read_clone_prompts
from lilo.tasks.records import Quarantine

__all__ = ["STAGE", "ClonedProbes", "CloneError", "locate_clone", "read_clone"]

STAGE = "import"
_KV = re.compile(r"kv-retrieval-(\d+)_keys\.jsonl\.gz$")
_MDQA = re.compile(r"nq-open-(\d+)_total_documents_gold_at_(\d+)\.jsonl\.gz$")
_ORACLE = "qa_data/nq-open-oracle.jsonl.gz"
# Far above the published files (lines of at most about 50 KB, files of at most a few hundred
# MB decompressed): a gzip bomb or a file with no line breaks stops here, naming its file.
MAX_LINE_CHARS = 1_000_000
MAX_FILE_CHARS = 1_000_000_000


class CloneError(InputError, ValueError):
    """Nothing to read at the path given."""


@dataclass
class ClonedProbes:
    items: list[ProbeItem] = field(default_factory=list)
    prompts: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (text, file)
    problems: list[Quarantine] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)  # file -> items read from it
    absent: list[str] = field(default_factory=list)
    hard_links: bool = False


def locate_clone(path: Path) -> Path:
    """The clone's root; CloneError when it holds neither data folder."""
    if not path.is_dir():
        raise CloneError(
            f"{path} is not a folder: give your clone of nelson-liu/lost-in-the-middle"
        )
    if not (path / "kv_retrieval_data").is_dir() and not (path / "qa_data").is_dir():
        raise CloneError(
            f"{path} holds neither kv_retrieval_data/ nor qa_data/: give the root of your clone "
            "of github.com/nelson-liu/lost-in-the-middle"
        )
    return path


def read_clone(path: Path, hard_links: bool = False) -> ClonedProbes:
    """Every file of the clone at `path`, each opened by `open_within` (a file with more
    than one name only with `hard_links`)."""
    root = locate_clone(path)
    out = ClonedProbes(hard_links=hard_links)
    out.prompts, prompt_problems = read_clone_prompts(root, hard_links)
    for line in prompt_problems:
        out.problems.append(
            Quarantine(f"lost-in-the-middle/{line.split(':')[0]}", STAGE, "probe_prompt", line)
        )
    kv_files = sorted((root / "kv_retrieval_data").glob("kv-retrieval-*_keys.jsonl.gz"))
    for file in kv_files:
        size = int(_KV.search(file.name).group(1))  # type: ignore[union-attr]
        _read_file(root, file, out, lambda row, n, rel, k=size: kv.clone_item(row, n, rel, k))
    present = {int(_KV.search(f.name).group(1)) for f in kv_files}  # type: ignore[union-attr]
    out.absent += [
        f"kv_retrieval_data/kv-retrieval-{k}_keys.jsonl.gz"
        for k in (75, 140, 300)
        if k not in present
    ]
    oracle = root / _ORACLE
    if oracle.is_file():
        _read_file(root, oracle, out, mdqa.oracle_item)
    else:
        out.absent.append(_ORACLE)
    for docs in (10, 20, 30):
        folder = root / "qa_data" / f"{docs}_total_documents"
        files = sorted(folder.glob("nq-open-*_total_documents_gold_at_*.jsonl.gz"))
        if not files:
            out.absent.append(f"qa_data/{docs}_total_documents/")
        for file in files:
            _read_file(root, file, out, lambda row, n, rel, d=docs: mdqa.clone_item(row, n, rel, d))
    _merge_mdqa(out)
    return out


def _read_file(root: Path, file: Path, out: ClonedProbes, make: Any) -> None:
    relative = file.relative_to(root).as_posix()
    read = total = 0
    try:
        with (
            open_within(file, root, out.hard_links) as handle,
            gzip.open(handle, "rt", encoding="utf-8") as lines,
        ):
            for n, text in enumerate(iter(lambda: lines.readline(MAX_LINE_CHARS + 1), "")):
                where = f"{relative}:{n + 1}"
                total += len(text)
                if len(text) > MAX_LINE_CHARS:
                    raise OSError(f"line {n + 1} longer than {MAX_LINE_CHARS:,} characters")
                if total > MAX_FILE_CHARS:
                    raise OSError(f"larger than {MAX_FILE_CHARS:,} characters decompressed")
                try:
                    out.items.append(make(json.loads(text), n, relative))
                    read += 1
                except RecursionError:
                    detail = f"{where}: JSON nested too deeply"
                    out.problems.append(
                        Quarantine(f"lost-in-the-middle/{where}", STAGE, "probe_item", detail)
                    )
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    detail = f"{where}: {exc}" if str(exc) else f"{where}: {type(exc).__name__}"
                    out.problems.append(
                        Quarantine(f"lost-in-the-middle/{where}", STAGE, "probe_item", detail)
                    )
    except (LinkOutside, HardLinked) as exc:
        why = str(exc).rpartition(": ")[2]
        reason = "link_outside" if isinstance(exc, LinkOutside) else "hard_link"
        out.problems.append(
            Quarantine(f"lost-in-the-middle/{relative}", STAGE, reason, f"{relative}: {why}")
        )
        return
    except (OSError, EOFError, UnicodeDecodeError, FileTooLarge) as exc:
        # not a regular file: the reason alone
        why = str(exc).rpartition(": ")[2] if isinstance(exc, FileTooLarge) else exc
        out.problems.append(
            Quarantine(
                f"lost-in-the-middle/{relative}",
                STAGE,
                "probe_file",
                f"{relative}: unreadable after {read} lines: {why}",
            )
        )
    out.files[relative] = read


def _merge_mdqa(out: ClonedProbes) -> None:
    """The gold_at_i files of one size hold the same examples with the gold passage moved:
    one item each (lilo places the gold passage itself); a line whose content differs
    between the files is a problem."""
    kept: dict[str, ProbeItem] = {}
    items: list[ProbeItem] = []
    for item in out.items:
        first = kept.setdefault(item.item_id, item)
        if first is item:
            items.append(item)
        elif first.sha256 != item.sha256:
            out.problems.append(
                Quarantine(
                    f"lost-in-the-middle/{item.source}:{item.line + 1}",
                    STAGE,
                    "probe_item",
                    f"{item.source}:{item.line + 1}: differs from "
                    f"{first.source}:{first.line + 1} beyond the gold passage's place",
                )
            )
    out.items = items
