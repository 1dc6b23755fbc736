"""Explicit content from handlers: checked as untrusted input, mapped to text, image, audio, link and
embedded-resource blocks."""

from __future__ import annotations

import base64

import mcp.types as types
import pytest

from apps_runtime.dispatch import RouteResult
from apps_runtime.json_schemas import compile_schema
from apps_runtime.sandbox.runtime import sdk
from mcp_gateway.tools.catalog.output_budget import OutputBudget
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.links import NoLinkOrigin, app_route_url
from mcp_gateway.tools.pipeline.results import route_result
from mcp_gateway.tools.pipeline.rich_content import ContentOrigin

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)
WAV = b"RIFF&\x00\x00\x00WAVEfmt " + bytes(32)
LINK_BASE = "https://platform.example/t/acme/apps/cases"


def mapped(body, *, output_schema=None, budget=None):
    validator = compile_schema(output_schema) if output_schema else None
    return route_result(RouteResult(200, body), validator, budget, lambda route: LINK_BASE + route)


def refusal(body, **kw) -> str:
    result = mapped(body, **kw)
    assert result.is_error is True and result.structured_content is None
    return result.content[0].text


def test_text_image_and_link_become_their_blocks():
    body = {
        "content": [
            sdk.text("Case 42 is open."),
            sdk.image(PNG, "image/png"),
            sdk.resource_link(
                "/cases/42?tab=notes", "Case 42", title="Case 42", mime_type="application/json"
            ),
        ]
    }
    result = mapped(body)
    assert result.is_error is False and result.structured_content is None
    text, image, link = result.content
    assert text == types.TextContent(type="text", text="Case 42 is open.")
    assert (image.type, image.mime_type, base64.b64decode(image.data)) == ("image", "image/png", PNG)
    assert isinstance(link, types.ResourceLink)
    assert (link.uri, link.name, link.title, link.mime_type) == (
        f"{LINK_BASE}/cases/42?tab=notes",
        "Case 42",
        "Case 42",
        "application/json",
    )


def test_audio_and_embedded_resources_become_their_blocks():
    body = {
        "content": [
            sdk.audio(WAV, "audio/wav"),
            sdk.embedded_resource("test://notes/1", "A note.", "text/plain"),
            sdk.embedded_resource("test://raw/1", b"\x00\x01", "application/octet-stream"),
        ]
    }
    result = mapped(body)
    assert result.is_error is False
    audio, text, blob = result.content
    assert (audio.type, audio.mime_type, base64.b64decode(audio.data)) == ("audio", "audio/wav", WAV)
    assert isinstance(text, types.EmbeddedResource) and isinstance(blob, types.EmbeddedResource)
    assert (text.resource.uri, text.resource.mime_type, text.resource.text) == (
        "test://notes/1",
        "text/plain",
        "A note.",
    )
    assert base64.b64decode(blob.resource.blob) == b"\x00\x01"


def test_the_output_budget_counts_embedded_text_but_not_audio():
    budget = OutputBudget(1000)  # about 4,000 bytes
    assert mapped({"content": [sdk.audio(WAV + bytes(6000), "audio/wav")]}, budget=budget).is_error is False
    assert "over this tool's output budget" in refusal(
        {"content": [sdk.embedded_resource("test://big", "x" * 6000)]}, budget=budget
    )


def test_structured_content_goes_along_and_meets_the_output_schema():
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    ok = mapped({"content": [sdk.text("3 cases")], "structuredContent": {"count": 3}}, output_schema=schema)
    assert ok.is_error is False and ok.structured_content == {"count": 3}
    assert "return it too" in refusal({"content": [sdk.text("3 cases")]}, output_schema=schema)
    assert "does not match its outputSchema" in refusal(
        {"content": [sdk.text("x")], "structuredContent": {"count": "3"}}, output_schema=schema
    )


@pytest.mark.parametrize(
    "body",
    [
        {"content": "a note"},
        {"content": []},
        {"content": [{"type": "text", "text": "x"}], "author": "ada"},
        {"content": [{"text": "x"}]},
        {"content": ["x"]},
    ],
)
def test_anything_but_explicit_content_stays_plain_json(body):
    result = mapped(body)
    assert result.is_error is False and result.structured_content == body


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"type": "video", "data": "AAAA", "mimeType": "video/mp4"}, "type 'video' is not allowed"),
        ({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}, "data is not audio of type audio/wav"),
        (
            {
                "type": "audio",
                "data": base64.b64encode(b"RIFF\0\0\0\0WEBPxxxx").decode(),
                "mimeType": "audio/wav",
            },
            "data is not audio of type audio/wav",
        ),
        (
            sdk.audio(WAV, "audio/wav") | {"mimeType": "audio/x-midi"},
            "mimeType 'audio/x-midi' is not allowed",
        ),
        ({"type": "resource", "resource": {}}, "needs a uri and exactly one of text or blob"),
        ({"type": "resource", "resource": "x"}, "content[1].resource: must be an object"),
        (sdk.embedded_resource("ui://case/card", "<html>", "text/html"), "is not an absolute URI"),
        (sdk.embedded_resource("no scheme", "x"), "is not an absolute URI"),
        ({"type": "resource", "resource": {"uri": "a:b", "text": "x", "blob": "AA=="}}, "exactly one of"),
        ({"type": "resource", "resource": {"uri": "a:b", "text": "x", "x": 1}}, "takes no key 'x'"),
        ({"type": "resource", "resource": {"uri": "a:b", "blob": "not base64!"}}, "data is not valid base64"),
        ({"type": "text", "text": 42}, "text must be a string"),
        ({"type": "text", "text": "x", "annotations": {}}, "text items take no key 'annotations'"),
        ({"type": "image", "data": "AAAA"}, "image items need mimeType"),
        (
            {
                "type": "image",
                "data": base64.b64encode(b"<svg onload=alert(1)>").decode(),
                "mimeType": "image/svg+xml",
            },
            "mimeType 'image/svg+xml' is not allowed",
        ),
        ({"type": "image", "data": "not base64!", "mimeType": "image/png"}, "data is not valid base64"),
        (
            {"type": "image", "data": base64.b64encode(b"<html>").decode(), "mimeType": "image/png"},
            "data is not image of type image/png",
        ),
        (
            {"type": "resource_link", "route": "https://evil.example/", "name": "x"},
            "is not a path of this app",
        ),
        ({"type": "resource_link", "route": "//evil.example/x", "name": "x"}, "is not a path of this app"),
        ({"type": "resource_link", "route": "/cases/../../admin/", "name": "x"}, "is not a path of this app"),
        ({"type": "resource_link", "route": "/a b", "name": "x"}, "is not a path of this app"),
        ({"type": "resource_link", "route": "/cases", "name": ""}, "name must be 1 to 200 characters"),
        ({"type": "resource_link", "route": "/cases", "name": "x", "mimeType": "html"}, "is not a MIME type"),
    ],
)
def test_hostile_items_are_refused_naming_the_item_and_the_rule(item, problem):
    text = refusal({"content": [sdk.text("fine"), item]})
    assert text.startswith("The tool returned content the platform refuses: content[1]")
    assert problem in text


def test_counts_and_sizes_are_bounded(settings):
    settings.MCP_CONTENT_MAX_ITEMS = 3
    settings.MCP_CONTENT_MAX_ITEM_BYTES = 1000
    settings.MCP_CONTENT_MAX_BYTES = 2500
    assert "content: 4 items, over the limit of 3" in refusal({"content": [sdk.text("x")] * 4})
    assert "content[0]: 1,001 bytes, over the limit of 1,000 bytes per item" in refusal(
        {"content": [sdk.text("é" * 500 + "x")]}
    )
    big_image = sdk.image(PNG + bytes(4000), "image/png")
    assert "content[0]: about 4," in refusal({"content": [big_image]})  # refused before decoding
    assert "content: at least 3,000 bytes, over the limit of 2,500 bytes in all" in refusal(
        {"content": [sdk.text("x" * 1000)] * 3}
    )


def test_explicit_content_over_the_output_budget_is_an_error_never_cut():
    text = refusal({"content": [sdk.text("word " * 1000)]}, budget=OutputBudget(1000))
    assert "about 1,250 tokens, over this tool's output budget of 1,000 tokens" in text
    assert "explicit content is never cut" in text


def test_images_do_not_count_against_the_token_budget():
    result = mapped({"content": [sdk.image(PNG + bytes(8000), "image/png")]}, budget=OutputBudget(100))
    assert result.is_error is False


def test_the_sdk_helpers_refuse_what_the_platform_would():
    with pytest.raises(ValueError, match="image/png"):
        sdk.image(PNG, "image/svg+xml")
    with pytest.raises(TypeError):
        sdk.image("not bytes", "image/png")
    with pytest.raises(ValueError):
        sdk.resource_link("cases/42", "Case 42")
    with pytest.raises(TypeError):
        sdk.text(42)


def _links(origin: str = ""):
    """Links as a call with ``origin`` makes them (a task's run: the origin it kept)."""
    # The link rule reads only the context's origin; no tenant or caller is involved.
    call = CallContext(tenant=None, caller=None, origin=origin)  # type: ignore[arg-type]
    return lambda route: app_route_url(call.link_origin, "acme", "cases", route)


def test_links_outside_a_request_use_public_base_url_or_are_refused(settings):
    link_url = _links()
    settings.PUBLIC_BASE_URL = "https://platform.example"
    assert link_url("/cases/42?tab=notes") == "https://platform.example/t/acme/apps/cases/cases/42?tab=notes"
    settings.PUBLIC_BASE_URL = ""
    result = route_result(RouteResult(200, {"content": [sdk.resource_link("/x", "X")]}), link_url=link_url)
    assert result.is_error is True
    assert result.content[0].text == "links to app routes need PUBLIC_BASE_URL outside an MCP request"


def test_a_tasks_run_links_with_the_origin_it_kept_unless_public_base_url_is_set(settings):
    settings.PUBLIC_BASE_URL = ""
    link_url = _links("http://127.0.0.1:8001")
    assert link_url("/x") == "http://127.0.0.1:8001/t/acme/apps/cases/x"
    settings.PUBLIC_BASE_URL = "https://platform.example"  # set since the task was created
    assert link_url("/x") == "https://platform.example/t/acme/apps/cases/x"
    settings.PUBLIC_BASE_URL = ""
    with pytest.raises(NoLinkOrigin):  # another call's origin is not this one's
        _links()("/x")


def test_an_embedded_resource_never_takes_a_uri_another_app_serves():
    owners = {"cases://notes/1": "cases", "other://x": "other"}
    origin = ContentOrigin("cases", owners.get)
    own = sdk.embedded_resource("cases://notes/1", "A note", "text/plain")
    (block,) = route_result(RouteResult(200, {"content": [own]}), origin=origin).content
    assert (str(block.resource.uri), block.resource.text) == ("cases://notes/1", "A note")
    unserved = sdk.embedded_resource("test://embedded-resource", "x")
    assert route_result(RouteResult(200, {"content": [unserved]}), origin=origin).is_error is False
    foreign = sdk.embedded_resource("other://x", "x")
    refused = route_result(RouteResult(200, {"content": [foreign]}), origin=origin)
    assert refused.is_error and "another app's resource" in refused.content[0].text
