"""Great Expectations suites, one JSON file per table (docs/design.md §11). Installed as package
data
so that validation finds them wherever lilo runs."""

from pathlib import Path

__all__ = ["SUITES_DIR"]

SUITES_DIR = Path(__file__).parent
