"""The ranking behind search_tools, on catalog entries built in memory (no database)."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import mcp.types as types
import pytest

from mcp_gateway.tools.catalog.catalog import CatalogEntry
from mcp_gateway.tools.search import embeddings
from mcp_gateway.tools.search.search_index import QUERY_MAX_CHARS, SearchIndex, words


def entry(app: str, name: str, description: str, keywords: tuple[str, ...] = (), **arguments: str):
    schema = {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in arguments.items()},
    }
    return CatalogEntry(
        wire_name=f"t_{app}_{name}",
        tool=types.Tool(
            name=f"t_{app}_{name}", title=words(name).title(), description=description, input_schema=schema
        ),
        read_only=False,
        app_name=app,
        tool_name=name,
        keywords=keywords,
    )


ENTRIES = [
    entry("billing", "create_invoice", "Issue an invoice to a customer.", customer_id="The customer billed."),
    entry("sales", "create_quote", "Prepare a price offer for a prospect."),
    entry("payments", "refund_payment", "Return a received payment.", keywords=("reimburse",)),
    entry("people", "request_leave", "Ask your manager for days away.", keywords=("vacation", "holiday")),
    entry("fleet", "report_damage", "Report a dent or scratch on a company car."),
]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex(ENTRIES)


def names(ranked) -> list[str]:
    return [e.tool_name for e in ranked.entries]


def test_words_split_identifiers():
    assert words("create_invoice dueDate") == "create invoice due Date"


def test_a_declared_keyword_finds_a_tool_whose_description_lacks_the_word(index):
    assert names(index.rank("reimburse the client", ENTRIES, 1)) == ["refund_payment"]
    assert names(index.rank("book a vacation in May", ENTRIES, 1)) == ["request_leave"]


def test_a_typo_is_repaired_against_the_indexes_words(index):
    assert index.query_tokens("invocie") == index.query_tokens("invoice") != []
    assert names(index.rank("refnud a paymnet", ENTRIES, 1)) == ["refund_payment"]


def test_only_candidates_come_back_however_well_others_match(index):
    others = [e for e in ENTRIES if e.tool_name != "create_invoice"]
    ranked = index.rank("create an invoice for the customer", others, 5)
    assert "create_invoice" not in names(ranked)
    assert index.rank("create an invoice", [], 5).entries == []


def test_argument_text_counts(index):
    assert names(index.rank("who gets billed", ENTRIES, 1)) == ["create_invoice"]


def test_nothing_in_common_gives_nothing_sure(index):
    ranked = index.rank("zzzz qqqq", ENTRIES, 5)
    assert ranked.can_satisfy is False


def test_a_huge_query_costs_no_more_than_its_first_characters(index):
    head = "create an invoice " * (QUERY_MAX_CHARS // 18)
    assert index.query_tokens(head + "refund " * 100_000) == index.query_tokens(head)


def test_the_embedding_model_loads_from_its_package_without_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the embedding model tried to open a connection")

    monkeypatch.setattr(embeddings, "_model", None)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    vectors = embeddings.embed(["refund a payment", "give money back"])
    assert vectors.shape == (2, embeddings.DIMENSIONS)
    assert float(vectors[0] @ vectors[1]) > 0.3


def test_concurrent_searches_rank_as_sequential_ones(index):
    queries = ["reimburse the client", "invocie a customer", "holiday in May", "dented car", "an offer"] * 20
    expected = [names(index.rank(q, ENTRIES, 3)) for q in queries]
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(lambda q: names(index.rank(q, ENTRIES, 3)), queries))
    assert found == expected
