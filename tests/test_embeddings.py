"""The Embedder: local windows pooled over the whole text, the `openai` backend over real
HTTP on 127.0.0.1 (the loopback server in llm_server.py), and the content cache."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import PAPERS
from llm_server import EMBEDDING_DIM, LLMServer, bag_of_words

from lilo.tasks.cache import cache_key
from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import EmbeddingSettings, Settings
from lilo.tasks.embeddings import Embedder, EmbeddingError, _load, resolve_device, token_windows
from lilo.tasks.errors import InputError
from lilo.tasks.methods._splitter import split_recursive

MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def long_chunk() -> str:
    """A real 1,024-token RAL-Writer chunk: about 1,300 word pieces, 5 windows."""
    text = clean_source(PAPERS / "herding-bayesian-quadrature", Settings().clean).text
    return max(split_recursive(text, 1024, 256), key=len)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        yield s


def _openai(tmp_path: Path, server: LLMServer, **embedding: object) -> EmbeddingSettings:
    cfg = {
        "backend": "openai",
        "model": "bge-base-en-v1.5",
        "base_url": server.base_url,
        "api_key": "sk-embed",
        "retries": 0,
        **embedding,
    }
    return Settings(data_dir=tmp_path).with_overrides({"embedding": cfg}).embedding


def _unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_windows_fit_the_model_and_cover_the_text(long_chunk: str) -> None:
    tokenizer = _load(MODEL).tokenizer
    windows = token_windows(tokenizer, long_chunk, 254)
    assert len(windows) >= 4
    for span, n in windows:
        assert 0 < n <= 254
        assert len(tokenizer(span, add_special_tokens=False).input_ids) == n
    assert sum(n for _, n in windows) == len(
        tokenizer(long_chunk, add_special_tokens=False, verbose=False).input_ids
    )
    assert "".join("".join(span.split()) for span, _ in windows) == "".join(long_chunk.split())


def test_a_word_longer_than_a_window_is_cut_inside() -> None:
    tokenizer = _load(MODEL).tokenizer
    windows = token_windows(tokenizer, "supercalifragilisticexpialidocious " * 3, 4)
    assert all(n <= 4 for _, n in windows) and sum(n for _, n in windows) > 4


def test_short_text_is_the_model_vector(tmp_path: Path) -> None:
    embedder = Embedder(EmbeddingSettings(), tmp_path)
    text = "Gaussian processes model stellar variability."
    expected = _load(MODEL).encode([text], normalize_embeddings=True)[0]
    assert np.allclose(embedder.embed([text])[0], expected, atol=1e-6)


def test_long_text_pools_its_windows(tmp_path: Path, long_chunk: str) -> None:
    embedder = Embedder(EmbeddingSettings(), tmp_path)
    model = _load(MODEL)
    windows = token_windows(model.tokenizer, long_chunk, 254)
    parts = model.encode([s for s, _ in windows], normalize_embeddings=True)
    weights = np.array([n for _, n in windows], dtype=np.float32)
    expected = _unit((weights @ parts).tolist())

    pooled = embedder.embed([long_chunk])[0]
    truncated = model.encode([long_chunk], normalize_embeddings=True)[0]
    assert np.allclose(pooled, expected, atol=1e-5)
    assert abs(np.linalg.norm(pooled) - 1) < 1e-5
    assert float(pooled @ truncated) < 0.99  # the tail of the chunk now counts


def test_cache_is_by_content_and_pooling_scheme(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    embedder = Embedder(settings.embedding, settings.data_dir)
    # A vector stored under the old key (model and text only) must not be served.
    stale = cache_key({"model": MODEL, "text": "b"})
    embedder.cache.put_bytes(stale, np.ones(384, dtype=np.float32).tobytes(), ".f32")

    first = embedder.embed(["a", "b", "a"])
    again = Embedder(settings.embedding, settings.data_dir)
    second = again.embed(["b", "a"])
    assert (embedder.computed, embedder.cached) == (2, 1)  # "a" once
    assert np.array_equal(first[0], first[2])
    assert (again.computed, again.cached) == (0, 2)
    assert np.array_equal(second, first[[1, 0]])
    assert not np.allclose(first[1], np.ones(384) / np.sqrt(384))
    device = resolve_device("auto")
    assert embedder.label == f"local:all-MiniLM-L6-v2/pooled-256 ({device}, batch 32)"


def test_the_device_is_chosen_recorded_and_checked(tmp_path: Path) -> None:
    import torch

    on_cpu = Embedder(EmbeddingSettings(device="cpu"), tmp_path)
    assert on_cpu.label.endswith("(cpu, batch 32)")
    chosen = resolve_device("auto")
    assert chosen == ("cuda" if torch.cuda.is_available() else chosen)
    assert chosen in ("cuda", "mps", "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="LILO_EMBEDDING__DEVICE=auto"):
            resolve_device("cuda")
    vectors = on_cpu.embed(["kernel learning for Gaussian processes"])
    other = tmp_path / "other"  # its own cache: computed again
    again = Embedder(EmbeddingSettings(batch_size=1), other)
    assert np.allclose(again.embed(["kernel learning for Gaussian processes"]), vectors)
    assert again.computed == 1


def test_no_texts_keeps_the_dimension(tmp_path: Path) -> None:
    assert Embedder(EmbeddingSettings(), tmp_path).embed([]).shape == (0, 384)


def test_openai_backend_over_http(tmp_path: Path, server: LLMServer) -> None:
    embedder = Embedder(_openai(tmp_path, server, batch_size=2), tmp_path)
    texts = ["kernel learning", "stellar surfaces", "normalizing flows", "kernel learning"]
    vectors = embedder.embed(texts)

    assert vectors.shape == (4, EMBEDDING_DIM)
    for text, row in zip(texts, vectors, strict=True):
        assert np.allclose(row, _unit(bag_of_words(text)), atol=1e-6)  # normalised, in order
    sent = server.requests
    assert [r["path"] for r in sent] == ["/v1/embeddings"] * 2  # 4 texts, batches of 2
    assert sent[0]["model"] == "bge-base-en-v1.5"
    assert sent[0]["input"] == texts[:2] and sent[0]["encoding_format"] == "float"
    assert sent[0]["auth"] == "Bearer sk-embed"
    assert embedder.label == f"openai:bge-base-en-v1.5@{server.base_url}"

    again = Embedder(_openai(tmp_path, server), tmp_path)
    assert np.array_equal(again.embed(texts[:2]), vectors[:2])
    assert len(server.requests) == 2 and again.cached == 2


def test_threads_asking_for_the_same_texts_at_once_compute_them_once(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    texts = [f"Sentence {n} of a paper that three Compress lengths read." for n in range(60)]
    embedders = [Embedder(settings.embedding, settings.data_dir) for _ in range(4)]
    start = threading.Barrier(len(embedders))

    def embed(embedder: Embedder) -> np.ndarray:
        start.wait()
        return embedder.embed(texts)

    with ThreadPoolExecutor(len(embedders)) as pool:
        results = list(pool.map(embed, embedders))
    assert sum(e.computed for e in embedders) == len(texts)
    assert sum(e.cached for e in embedders) == 3 * len(texts)
    assert all(np.array_equal(r, results[0]) for r in results)


def test_openai_cache_key_includes_the_endpoint(tmp_path: Path, server: LLMServer) -> None:
    Embedder(_openai(tmp_path, server), tmp_path).embed(["same text"])
    with LLMServer() as other:
        Embedder(_openai(tmp_path, other), tmp_path).embed(["same text"])
        assert len(other.requests) == 1


def test_openai_retries_a_500(tmp_path: Path, server: LLMServer) -> None:
    server.failures = [500]
    vectors = Embedder(_openai(tmp_path, server, retries=1), tmp_path).embed(["retried text"])
    assert len(server.requests) == 2
    assert np.allclose(vectors[0], _unit(bag_of_words("retried text")), atol=1e-6)


def test_openai_failure_names_the_fix(tmp_path: Path, server: LLMServer) -> None:
    server.failures = [503, 503]
    embedder = Embedder(_openai(tmp_path, server, retries=1), tmp_path)
    with pytest.raises(EmbeddingError, match=r"openai:bge-base-en-v1.5@.* failed.*--auto-truncate"):
        embedder.embed(["never served"])


def test_openai_without_base_url_says_what_to_do(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path).with_overrides({"embedding.backend": "openai"})
    with pytest.raises(InputError, match="LILO_EMBEDDING__BASE_URL.*embedding.backend=local"):
        Embedder(settings.embedding, settings.data_dir)


def test_api_key_stays_out_of_dumps() -> None:
    settings = Settings().with_overrides({"embedding": {"api_key": "sk-secret"}})
    assert "sk-secret" not in settings.model_dump_json()
