"""Reading a clone of the authors' repository (nelson-liu/lost-in-the-middle): whatever of
`kv_retrieval_data/` and `qa_data/` it holds, each line checked, as probe items; its prompt
templates. A clone may lack the large 10/20/30-document files or the 300-key file: what is
absent is said, not an error. Nothing is copied anywhere but the warehouse."""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from collections.abc import Iterable
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
# A whole import, all files together (the published data: 19 files, about 1.6 billion
# characters decompressed): a clone of many files of one size stops here, in one line.
MAX_IMPORT_CHARS = 3_000_000_000
MAX_IMPORT_FILES = 100


class CloneError(InputError):
    """Nothing to read at the path given."""


@dataclass
class ClonedProbes:
    items: list[ProbeItem] = field(default_factory=list)
    prompts: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (text, file)
    problems: list[Quarantine] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)  # file -> items read from it
    absent: list[str] = field(default_factory=list)
    hard_links: bool = False
    chars: int = 0  # characters read, all files together
    left: list[str] = field(default_factory=list)  # files not read: the import's limits
    kept: dict[str, ProbeItem] = field(default_factory=dict)  # item id -> its first item


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
    kv_files = _distinct(
        root,
        (root / "kv_retrieval_data").glob("kv-retrieval-*_keys.jsonl.gz"),
        _KV,
        "key count",
        out,
    )
    for file in kv_files:
        size = int(_KV.search(file.name).group(1))  # type: ignore[union-attr]  # globbed so
        _read_file(root, file, out, lambda row, n, rel, k=size: kv.clone_item(row, n, rel, k))
    present = {int(_KV.search(f.name).group(1)) for f in kv_files}  # type: ignore[union-attr]  # globbed so
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
        files = _distinct(
            root,
            folder.glob("nq-open-*_total_documents_gold_at_*.jsonl.gz"),
            _MDQA,
            "size and gold position",
            out,
        )
        if not files:
            out.absent.append(f"qa_data/{docs}_total_documents/")
        for file in files:
            _read_file(root, file, out, lambda row, n, rel, d=docs: mdqa.clone_item(row, n, rel, d))
    if out.left:
        more = f" and {len(out.left) - 1:,} more" if len(out.left) > 1 else ""
        out.problems.append(
            Quarantine(
                f"lost-in-the-middle/{out.left[0]}",
                STAGE,
                "probe_file",
                f"{out.left[0]}{more}: not read, the import reached its limit of "
                f"{MAX_IMPORT_CHARS:,} characters or {MAX_IMPORT_FILES} files: import the "
                "clone's published files only",
            )
        )
    return out


def _distinct(
    root: Path, files: Iterable[Path], pattern: re.Pattern[str], what: str, out: ClonedProbes
) -> list[Path]:
    """One file per value its name gives (`kv-retrieval-2_`, `-02_` and `-002_` give one key
    count): the shortest name of each, the others one problem line per value."""
    by_value: dict[tuple[int, ...], list[Path]] = defaultdict(list)
    for file in files:
        match = pattern.search(file.name)
        if match:
            by_value[tuple(int(g) for g in match.groups())].append(file)
    kept = []
    for value in sorted(by_value):
        first, *others = sorted(by_value[value], key=lambda f: (len(f.name), f.name))
        kept.append(first)
        if others:
            rel = others[0].relative_to(root).as_posix()
            more = f" and {len(others) - 1:,} more" if len(others) > 1 else ""
            out.problems.append(
                Quarantine(
                    f"lost-in-the-middle/{rel}",
                    STAGE,
                    "probe_file",
                    f"{rel}{more}: name the {what} of {first.name}, which is read: not read",
                )
            )
    return kept


def _read_file(root: Path, file: Path, out: ClonedProbes, make: Any) -> None:
    """The file's items into `out`, within the import's limits. An item id read before (the
    gold_at_i files of one size hold the same examples with the gold passage moved; lilo
    places the gold passage itself) is one item; a line whose content differs between the
    files is a problem."""
    relative = file.relative_to(root).as_posix()
    if out.chars >= MAX_IMPORT_CHARS or len(out.files) >= MAX_IMPORT_FILES:
        out.left.append(relative)
        return
    limit = min(MAX_FILE_CHARS, MAX_IMPORT_CHARS - out.chars)
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
                if total > limit:
                    raise OSError(
                        f"larger than {MAX_FILE_CHARS:,} characters decompressed"
                        if limit == MAX_FILE_CHARS
                        else f"past the import's {MAX_IMPORT_CHARS:,} characters decompressed"
                    )
                try:
                    _keep(make(json.loads(text), n, relative), out)
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
        why = str(exc).rpartition(": ")[2] if isinstance(exc, FileTooLarge) else str(exc)
        out.problems.append(
            Quarantine(
                f"lost-in-the-middle/{relative}",
                STAGE,
                "probe_file",
                f"{relative}: unreadable after {read} lines: {why}",
            )
        )
    finally:
        out.chars += total
    out.files[relative] = read


def _keep(item: ProbeItem, out: ClonedProbes) -> None:
    """`item` into `out` unless its id was read before; one with other content is a problem."""
    first = out.kept.setdefault(item.item_id, item)
    if first is item:
        out.items.append(item)
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
