"""Deploy checks of ``mcp.prompts``: what the manifest schema cannot say.

- exactly one of ``messages`` (a template) and ``route`` (a GET route that returns the messages);
- names unique in the app (their wire names are checked at deploy, against the tenant);
- argument names unique in the prompt; ``enum`` or ``complete``, not both; completion routes are
  GET routes;
- every ``{placeholder}`` of a message's text is a declared argument (``{{`` and ``}}`` write braces);
- each message has exactly one of ``text``, ``resource`` (a file resource of this app) and
  ``image`` (a PNG, JPEG, GIF or WebP bundle file, at most the resource file limit);
- ``auth`` only on template prompts (a route prompt follows its route's auth).
"""

from __future__ import annotations

import mimetypes
import string
from collections.abc import Mapping
from typing import Any

from apps_runtime.handler_contract import IMAGE_MIME_TYPES
from apps_runtime.manifest.problems import Problem, child, pointer
from apps_runtime.manifest.resources import (
    RouteInfo,
    check_file,
    check_get_route,
    completion_route_problems,
    iter_items,
)

MESSAGE_KINDS = ("text", "resource", "image")


class PlaceholderError(ValueError):
    """A prompt text whose braces do not parse."""


def placeholders(text: str) -> list[str]:
    """The ``{name}`` placeholders of a prompt text, in order.

    Raises:
        PlaceholderError: an unmatched brace, or a placeholder that is not a plain name.
    """
    names = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as err:
        raise PlaceholderError(str(err)) from err
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise PlaceholderError(f"{{{field}}} is not a plain {{argument}} placeholder")
        names.append(field)
    return names


def prompt_problems(
    manifest: Any, routes: Mapping[str, RouteInfo], files: Mapping[str, int]
) -> list[Problem]:
    """Every problem of ``mcp.prompts``; ``files`` maps bundle paths to their sizes."""
    problems: list[Problem] = []
    names: dict[str, int] = {}
    file_resources = {
        r["name"]
        for _, r in iter_items(manifest, "resources")
        if isinstance(r.get("name"), str) and "file" in r
    }
    for index, prompt in iter_items(manifest, "prompts"):
        base = pointer("mcp", "prompts", index)
        name = prompt.get("name")
        if isinstance(name, str):
            if name in names:
                problems.append(
                    Problem(
                        child(base, "name"),
                        f"prompt name {name!r} is already used by /mcp/prompts/{names[name]}: "
                        "prompt names must be unique in the app",
                    )
                )
            else:
                names[name] = index
        has_messages, has_route = "messages" in prompt, "route" in prompt
        if has_messages == has_route:
            problems.append(Problem(base, "a prompt needs exactly one of messages (a template) or route"))
        if has_route:
            problems += check_get_route(prompt["route"], child(base, "route"), manifest, routes, "prompts")
            if "auth" in prompt:
                problems.append(
                    Problem(
                        child(base, "auth"),
                        "auth is for template prompts: a route prompt follows its route's auth",
                    )
                )
        arguments = _argument_names(prompt, base, manifest, routes, problems)
        messages = prompt.get("messages")
        if isinstance(messages, list):
            for m_index, message in enumerate(messages):
                if isinstance(message, dict):
                    problems += _message_problems(
                        message, child(base, "messages", m_index), arguments, file_resources, files
                    )
    return problems


def _argument_names(
    prompt: dict, base: str, manifest: Any, routes: Mapping[str, RouteInfo], problems: list[Problem]
) -> set[str]:
    names: dict[str, int] = {}
    arguments = prompt.get("arguments")
    for a_index, argument in enumerate(arguments if isinstance(arguments, list) else []):
        if not isinstance(argument, dict):
            continue
        at = child(base, "arguments", a_index)
        name = argument.get("name")
        if isinstance(name, str):
            if name in names:
                problems.append(
                    Problem(
                        child(at, "name"),
                        f"argument {name!r} is already declared at arguments/{names[name]}: "
                        "rename or remove one",
                    )
                )
            else:
                names[name] = a_index
        if "enum" in argument and "complete" in argument:
            problems.append(Problem(at, "give enum or complete, not both"))
        problems += completion_route_problems(argument, at, manifest, routes)
    return set(names)


def _message_problems(
    message: dict, ptr: str, arguments: set[str], file_resources: set[str], files: Mapping[str, int]
) -> list[Problem]:
    kinds = [kind for kind in MESSAGE_KINDS if kind in message]
    if len(kinds) != 1:
        return [Problem(ptr, "a message needs exactly one of text, resource or image")]
    value = message[kinds[0]]
    if not isinstance(value, str):
        return []
    at = child(ptr, kinds[0])
    if kinds[0] == "text":
        try:
            found = placeholders(value)
        except PlaceholderError as err:
            return [Problem(at, f"{err}: write {{{{ and }}}} for literal braces")]
        missing = sorted({name for name in found if name not in arguments})
        if missing:
            return [
                Problem(
                    at,
                    f"placeholder {{{missing[0]}}} is not an argument of this prompt: "
                    "declare it in arguments",
                )
            ]
        return []
    if kinds[0] == "resource":
        if value not in file_resources:
            return [
                Problem(
                    at, f"{value!r} is not a file resource of this app: name one in mcp.resources with a file"
                )
            ]
        return []
    problems = check_file(value, at, files)
    guessed = mimetypes.guess_type(value, strict=False)[0]
    if not problems and guessed not in IMAGE_MIME_TYPES:
        problems.append(
            Problem(at, f"image {value!r} must be a {', '.join(IMAGE_MIME_TYPES)} file (by its extension)")
        )
    return problems
