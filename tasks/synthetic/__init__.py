"""A synthetic arXiv: a demo corpus with known answers and a loopback mirror serving it."""

from lilo.tasks.synthetic.corpus import SURVEY_ID, write_corpus
from lilo.tasks.synthetic.manifest import Fact, Manifest, ManifestItem, load_manifest
from lilo.tasks.synthetic.mirror import Mirror, serve_forever

__all__ = [
    "SURVEY_ID",
    "Fact",
    "Manifest",
    "ManifestItem",
    "Mirror",
    "load_manifest",
    "serve_forever",
    "write_corpus",
]
