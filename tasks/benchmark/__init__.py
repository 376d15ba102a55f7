"""Published benchmarks read from a user's clone (docs/design.md §14): pure reading and checking,
no warehouse access; flows/import_benchmark.py validates the papers and writes the result."""

from lilo.tasks.benchmark._assets import Asset
from lilo.tasks.benchmark._files import (
    STAGE,
    BenchmarkError,
    header_stripped,
    locate_dataset,
    title_of,
)
from lilo.tasks.benchmark._questions import Question
from lilo.tasks.benchmark._warnings import count_kinds, warning_kinds
from lilo.tasks.benchmark.longinoutbench import (
    Benchmark,
    Group,
    ImportedDataset,
    build_dataset,
    own_texts,
    read_longinoutbench,
)

__all__ = [
    "STAGE",
    "Asset",
    "Benchmark",
    "BenchmarkError",
    "Group",
    "ImportedDataset",
    "Question",
    "build_dataset",
    "count_kinds",
    "header_stripped",
    "locate_dataset",
    "own_texts",
    "read_longinoutbench",
    "title_of",
    "warning_kinds",
]
