"""Sentence vectors for tool search: WordLlama's small static embedding model, from its own package.

WordLlama (``l2_supercat``, 256 dimensions, ~16 MB of float16 weights and a tokenizer file) ships
inside the ``wordllama`` wheel. Its own ``WordLlama.load`` looks for the tokenizer in a folder name
the wheel does not use and then downloads from a model hub, so the files are opened here by path and
nothing is ever fetched. A vector is the normalised, weighted average of token vectors: no network,
no GPU, about 40 microseconds a short text on one core.

Vectors are kept per text in a bounded LRU (``core.caches.BoundedCache``) shared by every tenant:
after a deploy, only the tools whose text changed are embedded again.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import wordllama
from safetensors import safe_open
from tokenizers import Tokenizer
from wordllama.inference import WordLlamaInference

from core.caches import BoundedCache

WEIGHTS = Path(wordllama.__file__).parent / "weights" / "l2_supercat_256.safetensors"
TOKENIZER = Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
DIMENSIONS = 256
# Texts whose vectors are kept (1 KiB each): a few tenants of thousands of tools.
CACHE_ENTRIES = 50_000

_lock = threading.Lock()
_model: WordLlamaInference | None = None
_cache: BoundedCache[str, np.ndarray] = BoundedCache(CACHE_ENTRIES)


def model() -> WordLlamaInference:
    """The model, loaded once per process from the package's files (about 0.4 s).

    Raises:
        FileNotFoundError: the installed ``wordllama`` lacks the bundled weights or tokenizer.
    """
    global _model
    with _lock:
        if _model is None:
            tokenizer = Tokenizer.from_file(str(TOKENIZER))
            with safe_open(str(WEIGHTS), framework="np", device="cpu") as weights:
                _model = WordLlamaInference(weights.get_tensor("embedding.weight"), tokenizer)
        return _model


def embed(texts: list[str]) -> np.ndarray:
    """Unit vectors of ``texts`` (float32, one row each), from the cache where it has them."""
    found: dict[str, np.ndarray] = {}
    for text in texts:
        vector = _cache.get(text)
        if vector is not None:
            found[text] = vector
    missing = list(dict.fromkeys(t for t in texts if t not in found))
    if missing:
        fresh = model().embed(missing, norm=True).astype(np.float32)
        for text, vector in zip(missing, fresh, strict=True):
            found[text] = _cache.put(text, vector)
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.stack([found[t] for t in texts])


def embed_query(text: str) -> np.ndarray:
    """The unit vector of one query, as ``embed`` makes it (not cached: queries rarely repeat exactly).

    One text is encoded on this thread: the library's batch path hands even one text to the
    tokenizer's thread pool, which costs milliseconds on a busy server.
    """
    inference = model()
    ids = np.asarray(inference.tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.int64)
    if ids.size == 0:
        return np.zeros(DIMENSIONS, dtype=np.float32)
    vector = inference.embedding[np.clip(ids, 0, inference.embedding.shape[0] - 1)].mean(axis=0)
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm else vector).astype(np.float32)
