"""A template's files for one app: the one generator ``lcp init`` and the console's "New app" use.

The files are package data under ``app_templates/files/<template>/``. In every file ``__APP__``
becomes the app's name and ``__TITLE__`` its title. The ``crud`` template is also field-aware: its
collection's fields fill the manifest's schemas and tool descriptions (in code, so the manifest is
always valid JSON) and the ``__NAME__`` placeholders of its handlers, screen, guide and example test
(as Python, JavaScript or Markdown literals of names already checked by ``fields``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib import resources
from importlib.resources.abc import Traversable

from app_templates.exceptions import TemplateError
from app_templates.fields import DEFAULT_FIELDS, Field, check_fields

TEMPLATES = ("blank", "crud", "service")
DESCRIPTIONS = {
    "blank": "one route and the tool that calls it",
    "crud": "a collection of records with list, get, create, update and delete tools, a resource, "
    "a prompt and a screen",
    "service": "a tool that calls another service over HTTP (request.http, egress)",
}
APP_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")  # the manifest's app name pattern
MANIFEST = "app.json"
LINE_WIDTH = 100

# An example value of each type, for the example test: what create_item gets, then update_item.
_SAMPLES: dict[str, tuple] = {
    "string": ("Call the plumber", "Call the electrician"),
    "text": ("Ask about Tuesday", "Ask about Friday"),
    "integer": (3, 4),
    "number": (2.5, 4.25),
    "boolean": (True, False),
    "date": ("2026-01-31", "2026-02-28"),
}


def app_name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as an app name (None: nothing)."""
    if not APP_NAME.fullmatch(name):
        return (
            f"'{name[:60]}' is not an app name: lowercase letters, digits and _, a letter first, at most 40"
        )
    return None


def template_files(template: str) -> dict[str, str]:
    """Relative path -> text of every file of ``template``, placeholders unfilled.

    Raises:
        TemplateError: no such template.
    """
    if template not in TEMPLATES:
        raise TemplateError([f"'{template[:60]}' is not a template: one of {', '.join(TEMPLATES)}"])
    found: dict[str, str] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.name == "__pycache__":
                continue
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            else:
                found[f"{prefix}{child.name}"] = child.read_text(encoding="utf-8")

    walk(resources.files("app_templates") / "files" / template, "")
    return found


def render(template: str, name: str, fields: Sequence[Field] | None = None) -> dict[str, str]:
    """The files of ``template`` for an app called ``name`` (``fields``: the crud collection's, else its
    default title, notes and done).

    Raises:
        TemplateError: an unknown template, a bad app name, bad fields, or fields for a template
            without a collection.
    """
    problem = app_name_problem(name)
    if problem:
        raise TemplateError([problem])
    if fields is not None and template != "crud":
        raise TemplateError([f"the {template} template has no collection: only crud takes fields"])
    files = template_files(template)
    title = name.replace("_", " ").capitalize()
    values = {"__APP__": name, "__TITLE__": title}
    if template == "crud":
        chosen = check_fields(list(fields) if fields is not None else list(DEFAULT_FIELDS))
        values |= _crud_values(chosen)
        files[MANIFEST] = _crud_manifest(files[MANIFEST], chosen)
    return {path: _fill(text, values) for path, text in files.items()}


def _fill(text: str, values: dict[str, str]) -> str:
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def _flag(fields: Sequence[Field]) -> Field | None:
    return next((field for field in fields if field.is_flag), None)


def _crud_values(fields: Sequence[Field]) -> dict[str, str]:
    """The crud files' placeholders, as literals of the language each appears in."""
    flag = _flag(fields)
    given = [field for field in fields if field is not flag]
    sample = {field.name: _SAMPLES[field.type][0] for field in given}
    change = {flag.name: True} if flag else {given[0].name: _SAMPLES[given[0].type][1]}
    required = [field.name for field in fields if field.required]
    heading = next((f.name for f in fields if f.type in ("string", "text")), fields[0].name)
    return {
        "__FIELDS__": repr(tuple(f.name for f in given)),
        "__ALL_FIELDS__": repr(tuple(f.name for f in fields)),
        "__STARTS_FALSE__": repr((flag.name,) if flag else ()),
        "__FLAG__": repr(flag.name if flag else None),
        "__SAMPLE__": repr(sample),
        "__CHANGE__": repr(change),
        "__REQUIRED__": repr(tuple(required)),
        "__HEADING__": heading,
        "__REQUIRED_TEXT__": _words(required) if required else "the fields you know",
        "__FLAG_LINE__": (
            f"- Mark an item {flag.name} (update_item with `{flag.name}: true`) instead of removing it.\n"
            if flag
            else ""
        ),
    }


def _words(names: Sequence[str]) -> str:
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _crud_manifest(text: str, fields: Sequence[Field]) -> str:
    """The crud manifest with the collection's schema, the tools' arguments and their descriptions."""
    manifest = json.loads(text)
    flag = _flag(fields)
    given = [field for field in fields if field is not flag]
    schema = manifest["collections"]["items"]["schema"]
    schema["properties"] = {field.name: field.schema() for field in fields}
    schema["required"] = [field.name for field in fields if field.required]
    if not schema["required"]:
        del schema["required"]
    tools = {tool["name"]: tool for tool in manifest["mcp"]["tools"]}

    listing = tools["list_items"]["inputSchema"]["properties"]
    if flag:
        open_only = {"type": "boolean", "description": f"Only items not {flag.name} yet"}
        tools["list_items"]["inputSchema"]["properties"] = {"open_only": open_only, **listing}
    else:
        tools["list_items"]["description"] = "List the items, newest first. Use it to find an item's id."

    create = tools["create_item"]
    create["inputSchema"]["properties"] = {field.name: field.schema() for field in given}
    create["inputSchema"]["required"] = [field.name for field in given if field.required]
    if not create["inputSchema"]["required"]:
        del create["inputSchema"]["required"]
    optional = [field.name for field in given if not field.required]
    required = [field.name for field in given if field.required]
    parts = ([f"with {_words(required)}"] if required else []) + (
        [f"optionally {_words(optional)}"] if optional else []
    )
    create["description"] = " ".join(["Add an item", ", ".join(parts)]).strip() + (
        ". Returns the new item with its id."
    )

    update = tools["update_item"]
    update["inputSchema"]["properties"] |= {field.name: field.schema() for field in fields}
    names = _words([field.name for field in fields]).replace(" and ", " or ")
    update["description"] = f"Change an item's {names}; fields left out stay as they are."

    review = manifest["mcp"]["prompts"][0]["messages"][0]
    listed = "the open items (list_items with open_only)" if flag else "the items (list_items)"
    review["text"] = (
        f"List {listed} and suggest which to deal with first. Focus: {{focus}}. Follow the guide below."
    )
    if not flag:
        manifest["mcp"]["resources"][0]["description"] = (
            "When to add an item, how to word it, how to change it."
        )
        prompt = manifest["mcp"]["prompts"][0]
        prompt["title"] = "Review the items"
        prompt["description"] = "Go through the items and suggest which to deal with first."
    manifest["screens"]["item_card"]["description"] = "One item and its fields."
    return _compact_json(manifest) + "\n"


def _compact_json(value: object, indent: int = 0, column: int = 0) -> str:
    """JSON as a person would lay it out: a value that fits on its line stays on one line.

    ``indent``: the nesting's indentation; ``column``: where on its line the value starts.
    """
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or column + len(flat) <= LINE_WIDTH or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, list):
        items = [inner + _compact_json(item, indent + 2, indent + 2) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    members = []
    for key, item in value.items():
        head = f"{inner}{json.dumps(key, ensure_ascii=False)}: "
        members.append(head + _compact_json(item, indent + 2, len(head)))
    return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"
