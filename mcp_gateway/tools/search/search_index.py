"""Ranking a tenant's tools by what a user asks for: the engine behind the built-in ``search_tools``.

Two signals, fused per query:

- lexical: BM25 (``bm25s``) over each tool's words, English-stemmed (``PyStemmer``) with stop words
  removed: its name and title (twice: they say what it is), the keywords its manifest declares (twice),
  its description, its app's title and description, and its arguments' names and descriptions. A query
  word the index does not know (a typo) is replaced by the closest known word of nearly the same
  length and first letter, if one is close enough.
- semantic: the cosine of WordLlama sentence vectors (``embeddings``) of the query and of the tool's
  name, title, keywords and description, which lifts paraphrases that share no word with the tool.

The index covers every tool of the tenant at one catalog state and knows nothing about callers: the
caller's own visible tools (``catalog.visible_tools``, the list ``tools/list`` is made from) are the
only candidates a query is ranked over, so a tool the caller may not use can never come back.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from mcp_gateway.tools.search import embeddings

if TYPE_CHECKING:  # the catalog builds this index; entries are only read here
    from mcp_gateway.tools.catalog.catalog import CatalogEntry

# Bounds on what one tool contributes, whatever its manifest holds: the index's size and build time.
FIELD_MAX_CHARS = 600
DOCUMENT_MAX_CHARS = 4000
EMBEDDED_MAX_CHARS = 600
MAX_ARGUMENTS = 40
# Bounds on one query's work.
QUERY_MAX_CHARS = 1000
QUERY_MAX_WORDS = 32
TYPO_MIN_CHARS = 4
TYPO_CUTOFF = 0.8

# Weight of the lexical score (BM25, scaled so the best candidate scores 1) against the cosine.
LEXICAL_WEIGHT = 0.5
# canSatisfyIntent: the best candidate shares a word with the query and its vectors agree this much,
# or the vectors alone agree more.
MATCH_COSINE = 0.25
STRONG_COSINE = 0.5

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z][a-z]+")


def words(text: str) -> str:
    """``text`` with identifiers split into words: ``create_invoice`` and ``dueDate`` become two each."""
    return _CAMEL.sub(" ", text).replace("_", " ").replace("-", " ")


def _clip(text: str | None, limit: int = FIELD_MAX_CHARS) -> str:
    return (text or "")[:limit]


def _argument_text(schema: dict) -> str:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return ""
    parts = []
    for name, spec in list(properties.items())[:MAX_ARGUMENTS]:
        parts.append(words(str(name)))
        if isinstance(spec, dict):
            parts.append(_clip(str(spec.get("description") or spec.get("title") or ""), 200))
    return " ".join(parts)


def _name_text(entry: CatalogEntry) -> str:
    if entry.builtin is not None:
        return words(entry.builtin)
    return words(f"{entry.app_name or ''} {entry.tool_name or ''}")


def lexical_document(entry: CatalogEntry) -> str:
    """The text BM25 indexes for ``entry`` (see the module docstring for what goes in, and why twice)."""
    tool = entry.tool
    head = " ".join([_name_text(entry), _clip(tool.title), _clip(" ; ".join(entry.keywords))])
    parts = [
        head,
        head,
        _clip(tool.description, 2000),
        _clip(entry.app_title),
        _clip(entry.app_description),
        _argument_text(tool.input_schema),
    ]
    return " ".join(parts)[:DOCUMENT_MAX_CHARS]


def semantic_document(entry: CatalogEntry) -> str:
    """The text whose vector stands for ``entry``: what it is, in a few lines."""
    tool = entry.tool
    parts = [_clip(tool.title), _name_text(entry), ", ".join(entry.keywords), _clip(tool.description)]
    return ". ".join(p for p in parts if p)[:EMBEDDED_MAX_CHARS]


@dataclass(frozen=True)
class Ranked:
    """A query's candidates, best first, and whether the best one plausibly does what was asked."""

    entries: list[CatalogEntry]
    can_satisfy: bool


class SearchIndex:
    """Every tool of one catalog state, indexed for ``rank``; built once, then read-only."""

    def __init__(self, entries: Sequence[CatalogEntry]):
        self.entries = list(entries)
        self._position = {entry.wire_name: i for i, entry in enumerate(self.entries)}
        self._local = threading.local()
        # Words as written (bm25s's tokenizer and stop words), then each distinct word stemmed once:
        # the unstemmed words are also what typo repair compares against.
        written = bm25s.tokenize(
            [words(lexical_document(e)) for e in self.entries], return_ids=False, show_progress=False
        )
        distinct = sorted({word for doc in written for word in doc})
        stems = dict(zip(distinct, self._stemmer.stemWords(distinct), strict=True))
        tokens = [[stems[word] for word in doc] for doc in written]
        self._bm25 = bm25s.BM25()
        self._bm25.index(tokens, show_progress=False)
        self._vocabulary = set(stems.values())
        # Known words by first letter, for typo repair: a typo rarely changes the first letter.
        surface: dict[str, list[str]] = {}
        for word in distinct:
            if word.isalpha():
                surface.setdefault(word[0], []).append(word)
        self._surface = surface
        self._vectors = embeddings.embed([semantic_document(e) for e in self.entries])
        self._positions_lock = threading.Lock()
        self._positions: dict[int, tuple[list[CatalogEntry], np.ndarray]] = {}

    @property
    def _stemmer(self) -> Stemmer.Stemmer:
        # PyStemmer's stemmers keep state between calls and are not thread-safe: one per thread.
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            stemmer = self._local.stemmer = Stemmer.Stemmer("english")
        return stemmer

    def positions(self, candidates: list[CatalogEntry]) -> np.ndarray:
        """Index rows of those ``candidates`` the index holds; kept per list object (the catalog keeps
        one list per caller view, so a caller's next search finds its rows ready)."""
        with self._positions_lock:
            kept = self._positions.get(id(candidates))
            if kept is not None and kept[0] is candidates:
                return kept[1]
        rows = np.fromiter(
            (self._position[e.wire_name] for e in candidates if e.wire_name in self._position), dtype=np.int64
        )
        with self._positions_lock:
            if len(self._positions) > 256:
                self._positions.clear()
            self._positions[id(candidates)] = (candidates, rows)
        return rows

    def query_tokens(self, query: str) -> list[str]:
        """The query's stemmed words, typos repaired against the index's words, stop words dropped."""
        text = words(query[:QUERY_MAX_CHARS]).lower()
        raw = _WORD.findall(text)[:QUERY_MAX_WORDS]
        repaired = []
        for word in raw:
            stem = self._stemmer.stemWord(word)
            if stem not in self._vocabulary and len(word) >= TYPO_MIN_CHARS:
                near = [w for w in self._surface.get(word[0], ()) if abs(len(w) - len(word)) <= 2]
                match = difflib.get_close_matches(word, near, n=1, cutoff=TYPO_CUTOFF)
                word = match[0] if match else word
            repaired.append(word)
        # The documents' rule (bm25s's English stop words, then the stemmer), applied here directly:
        # bm25s.tokenize sets up progress bars per call, a millisecond a query.
        kept = [w for w in repaired if w not in STOPWORDS_EN]
        return [t for t in self._stemmer.stemWords(kept) if t in self._vocabulary]

    def rank(self, query: str, candidates: list[CatalogEntry], limit: int) -> Ranked:
        """The ``limit`` best of ``candidates`` for ``query``; only ever entries of ``candidates``."""
        rows = self.positions(candidates)
        if rows.size == 0 or not query.strip():
            return Ranked([], False)
        tokens = self.query_tokens(query)
        lexical = self._bm25.get_scores(tokens)[rows] if tokens else np.zeros(rows.size)
        top_lexical = float(lexical.max()) if lexical.size else 0.0
        if top_lexical > 0:
            lexical = lexical / top_lexical
        # Every tool's cosine, then the candidates': einsum runs on this thread, where a BLAS matmul
        # would wake its thread pool per query (ten times slower on a busy server), and taking rows
        # of the scores copies 1/256 of what taking rows of the vectors would.
        query_vector = embeddings.embed_query(query[:QUERY_MAX_CHARS])
        cosine = np.einsum("ij,j->i", self._vectors, query_vector)[rows]
        fused = LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * np.clip(cosine, 0, None)
        count = min(limit, rows.size)
        best = np.argpartition(-fused, count - 1)[:count]
        best = best[np.argsort(-fused[best], kind="stable")]
        scored = [i for i in best if fused[i] > 0]
        if not scored:
            return Ranked([], False)
        top = scored[0]
        can_satisfy = bool(cosine[top] >= STRONG_COSINE or (lexical[top] > 0 and cosine[top] >= MATCH_COSINE))
        return Ranked([self.entries[rows[i]] for i in scored], can_satisfy)
