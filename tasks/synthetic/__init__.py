"""A synthetic arXiv: a demo corpus with known answers and a loopback mirror serving it."""

from tasks.synthetic.corpus import SURVEY_ID, write_corpus
from tasks.synthetic.manifest import Fact, Manifest, ManifestItem, load_manifest
from tasks.synthetic.mirror import Mirror, serve_forever

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
