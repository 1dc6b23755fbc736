"""Reference loops in an embedded JSON Schema that no value can ever get out of.

A recursive schema is fine when each turn reads a deeper part of the value (``{"properties":
{"children": {"items": {"$ref": "#"}}}}``: the recursion ends with the value). A loop made only of
keywords that apply to the *same* value (``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``,
``if``/``then``/``else``, ``dependentSchemas``...) never ends: ``{"$ref": "#"}`` at the root, or two
``$defs`` referring to each other, deployed fine and then failed every call (the validator gave up
with RecursionError). The deploy refuses such a loop with the pointer of the reference that closes it.

Only called on a schema whose references all resolve inside it (``embedded_schemas`` checks that
first); the search is iterative, so its depth is bounded by the bundle, not the stack.
"""

from __future__ import annotations

from typing import Any

from apps_runtime.json_schemas import SCHEMA_FAULTS, local_lookup
from apps_runtime.manifest.problems import Problem, child, pointer

# Keywords whose subschemas apply to the value itself, not to a part of it.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf", "extends")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")  # dependencies: its schema values (drafts 4-7)
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
# Walked to find every subschema, as embedded_schemas' walk reads them.
_NAME_MAPS = frozenset(
    ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
)
_DATA = frozenset(("const", "enum", "default", "examples"))

Place = tuple  # tokens under the schema's pointer
Edge = tuple[Place, Place]  # (the subschema reached, the place of the keyword that reaches it)


def reference_loop_problems(schema: dict, ptr: str, dialect: type) -> list[Problem]:
    """A problem for each loop of same-value keywords in ``schema`` (found at ``ptr``), at the
    reference that closes it."""
    places = _subschemas(schema)
    if not any(key in node for node in places.values() for key in _REFERENCES):
        return []  # without references the same-value keywords form a tree: no loop
    try:
        lookup = local_lookup(schema, dialect)
    except SCHEMA_FAULTS:  # an $id it cannot use: embedded_schemas says so
        return []
    by_identity = {id(node): at for at, node in places.items()}
    edges = {at: list(_in_place_edges(node, at, lookup, by_identity)) for at, node in places.items()}
    problems = []
    for closing, target in _loops(edges):
        problems.append(
            Problem(
                child(ptr, *closing),
                f"this leads back to {_ref(target)} of the same schema without "
                "reading any part of the value, so checking any value would never end: make each turn "
                "of a recursive schema go through properties, items or another keyword that reads "
                "inside the value",
            )
        )
    return problems


def _ref(place: Place) -> str:
    """A place as the local reference that names it (``#``, ``#/$defs/a``)."""
    return "#" + pointer(*place) if place else "#"


def _subschemas(schema: dict) -> dict[Place, dict]:
    """Every object of the schema that may be a subschema, by place."""
    found: dict[Place, dict] = {}
    stack: list[tuple[Any, Place]] = [(schema, ())]
    while stack:
        node, at = stack.pop()
        if isinstance(node, list):
            stack += [(item, (*at, index)) for index, item in enumerate(node)]
            continue
        if not isinstance(node, dict):
            continue
        found[at] = node
        for key, value in node.items():
            if key in _DATA:
                continue
            if key in _NAME_MAPS and isinstance(value, dict):
                stack += [(sub, (*at, key, name)) for name, sub in value.items()]
            elif isinstance(value, dict | list):
                stack.append((value, (*at, key)))
    return found


def _in_place_edges(node: dict, at: Place, lookup: Any, by_identity: dict[int, Place]) -> list[Edge]:
    edges: list[Edge] = []
    for key in _REFERENCES:
        ref = node.get(key)
        if isinstance(ref, str):
            try:
                target = by_identity.get(id(lookup(ref)))
            except SCHEMA_FAULTS:
                target = None  # not resolvable statically (a dynamic anchor): not followed
            if target is not None:
                edges.append((target, (*at, key)))
    for key in _IN_PLACE_ONE:
        if isinstance(node.get(key), dict):
            edges.append(((*at, key), (*at, key)))
    for key in _IN_PLACE_LISTS:
        items = node.get(key)
        if isinstance(items, list):
            edges += [
                ((*at, key, i), (*at, key, i)) for i, item in enumerate(items) if isinstance(item, dict)
            ]
    for key in _IN_PLACE_MAPS:
        values = node.get(key)
        if isinstance(values, dict):
            edges += [
                ((*at, key, name), (*at, key, name)) for name, sub in values.items() if isinstance(sub, dict)
            ]
    return edges


def _loops(edges: dict[Place, list[Edge]]) -> list[tuple[Place, Place]]:
    """``(place of the closing keyword, subschema it returns to)`` of each loop found by a depth-first
    search (iterative) of the same-value graph."""
    state: dict[Place, int] = {}  # 1: on the current path, 2: done
    found = []
    for start in edges:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(edges[start]))]
        while stack:
            at, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                state[at] = 2
                stack.pop()
                continue
            target, via = step
            if state.get(target) == 1:
                found.append((via, target))
            elif target not in state and target in edges:
                state[target] = 1
                stack.append((target, iter(edges[target])))
    return found
