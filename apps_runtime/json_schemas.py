"""Every JSON Schema validator of the platform, built in one place and safe on tenant schemas.

Tool ``inputSchema``/``outputSchema`` and collection schemas are tenant input, so:

- **Nothing is fetched.** jsonschema's default registry resolves a ``$ref`` it does not hold by
  reading ``file:`` URIs and fetching ``http:`` ones (no timeout), and puts what it got in error
  messages. Here the registry's retrieve function refuses every URI: only the document itself and
  the bundled JSON Schema metaschemas resolve. The deploy validator refuses non-local references
  up front; this is what still holds for versions deployed before that rule.
- **Patterns run on RE2**, which matches in linear time: ``"^(a+)+$"`` against a few dozen
  characters would take Python's backtracking ``re`` years. Every keyword that runs a pattern
  (``pattern``, ``patternProperties``, and the ``additionalProperties``/``unevaluatedProperties``
  bookkeeping that consults ``patternProperties``) and the ``regex`` format use it. JSON Schema
  patterns are ECMA-262 regexes; RE2 accepts most of that syntax, ``\\uXXXX`` is translated, and
  lookaround and backreferences are refused (the deploy validator says so with a pointer).
- **Checking never raises.** A schema the library cannot apply (a reference it may not resolve, a
  pattern RE2 refuses, nesting too deep for the interpreter, a keyword of the wrong type in a
  version deployed before the metaschema check) yields one error carrying an error id instead;
  the details go to the log, never to the caller.
- **jsonschema-rs only ever says "valid".** At deploy, the metaschema check of each embedded schema
  and the manifest's structural check ask jsonschema-rs first (microseconds, where the Python
  checkers take milliseconds); a document it does not pass goes to the Python checker, which gives
  the verdict and the messages. It never fetches either, and it is used only where it is exactly
  as strict (``FastCheck``).
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import types
from collections.abc import Callable, Collection, Iterator
from typing import Any

import jsonschema_rs
import re2
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import FormatChecker, validators
from jsonschema.exceptions import UnknownType, ValidationError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as METASCHEMAS

from apps_runtime.jsonschema_seams import PATTERN_MODULES
from core.error_ids import error_id_note, new_error_id

logger = logging.getLogger(__name__)

DEFAULT_DIALECT = validators.Draft202012Validator
DIALECTS = (
    validators.Draft202012Validator,
    validators.Draft201909Validator,
    validators.Draft7Validator,
    validators.Draft6Validator,
    validators.Draft4Validator,
    validators.Draft3Validator,
)

# What applying a tenant schema can raise: the schema's fault, never the instance's.
SCHEMA_FAULTS: tuple[type[BaseException], ...] = (
    referencing.exceptions.Unresolvable,  # a reference outside the document, or to nothing
    UnknownType,
    re2.error,
    RecursionError,  # a reference cycle applied to a deep value, or very deep nesting
    TypeError,  # keyword values of the wrong type ({"properties": []}, {"minimum": "1"})
    AttributeError,
    LookupError,
    ValueError,
)

# RE2's memory budget per compiled pattern (its default is 8 MiB). 4 MiB still compiles
# "^[\p{L}\p{N} .'-]{1,200}$"; a cached worst case then holds about 2 MB.
_RE2_MAX_MEM = 4 << 20


def _refuse_retrieval(uri: str) -> referencing.Resource:
    """The registry's retrieve function: schemas are self-contained, so no URI is ever read."""
    raise referencing.exceptions.NoSuchResource(ref=uri)


_NO_RETRIEVAL = referencing.Registry(retrieve=_refuse_retrieval)

# ECMA-262 writes a code point as \uXXXX or \u{X...}; RE2 as \x{X...}. Escaped pairs are matched as
# a whole so that "\\u0041" (a backslash, then "u0041") stays as it is. Linear: no nested repetition.
_ECMA_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\u\{([0-9A-Fa-f]{1,6})\}|\\.", re.DOTALL)


# JSON strings may hold lone surrogates (\ud800), which UTF-8, and so RE2, cannot: U+FFFD stands in.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _re2_syntax(pattern: str) -> str:
    def replace(match: re.Match) -> str:
        code = match[1] or match[2]
        return f"\\x{{{code}}}" if code else match[0]

    return _SURROGATE.sub("\ufffd", _ECMA_ESCAPE.sub(replace, pattern))


@functools.lru_cache(maxsize=128)
def compile_pattern(pattern: str) -> Any:
    """A schema pattern compiled by RE2 (cached).

    Raises:
        re2.error: RE2 cannot compile it (lookaround, backreferences, bad syntax, too large).
    """
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.max_mem = _RE2_MAX_MEM
    return re2.compile(_re2_syntax(pattern), options)


def pattern_problem(pattern: str) -> str | None:
    """Why RE2 cannot run ``pattern``, for a deploy problem, or None when it can."""
    try:
        compile_pattern(pattern)
    except re2.error as err:
        reason = err.args[0] if err.args else "unknown error"
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        return reason
    return None


def _re2_search(pattern: str, string: str) -> Any:
    regex = compile_pattern(pattern)
    try:
        return regex.search(string)
    except UnicodeEncodeError:
        return regex.search(_SURROGATE.sub("\ufffd", string))


def _is_regex(instance: object) -> bool:
    """The ``regex`` format: a string RE2 compiles (Python's ``re`` would recurse on deep nesting)."""
    return not isinstance(instance, str) or pattern_problem(instance) is None


def _on_re2(*modules: types.ModuleType) -> dict[Any, types.FunctionType]:
    """Copies of the functions of jsonschema's keyword modules whose ``re`` is RE2.

    jsonschema runs patterns with ``re.search`` in its keyword functions and in the helpers that
    find which properties ``patternProperties`` covers (for ``additionalProperties`` and
    ``unevaluatedProperties``). Each copy keeps the library's code and sees a namespace where ``re``
    has only ``search``, backed by RE2, and where the other copied functions replace their
    originals, so helpers and recursion stay on RE2. Any other use of ``re`` there fails loudly
    (a schema fault) instead of silently backtracking. The library's modules are left untouched.
    """
    engine = types.SimpleNamespace(search=_re2_search, error=re2.error)
    copies: dict[Any, types.FunctionType] = {}
    for module in modules:
        namespace = dict(vars(module), re=engine)
        for name, value in vars(module).items():
            if not inspect.isfunction(value):
                continue
            if value in copies:  # a helper imported from a module copied before
                namespace[name] = copies[value]
            elif value.__module__ == module.__name__:
                copy = types.FunctionType(
                    value.__code__, namespace, name, value.__defaults__, value.__closure__
                )
                copy.__kwdefaults__ = value.__kwdefaults__
                copies[value] = namespace[name] = copy
    return copies


def _safe_dialect(cls: type[Validator], copies: dict[Any, types.FunctionType]) -> type[Validator]:
    checker = FormatChecker(formats=())
    checker.checkers = {**cls.FORMAT_CHECKER.checkers, "regex": (_is_regex, ())}
    keywords = {keyword: copies[fn] for keyword, fn in cls.VALIDATORS.items() if fn in copies}
    return validators.extend(cls, validators=keywords, format_checker=checker)


def _safe_dialects() -> dict[type[Validator], type[Validator]]:
    copies = _on_re2(*PATTERN_MODULES)
    return {cls: _safe_dialect(cls, copies) for cls in DIALECTS}


_SAFE = _safe_dialects()


def dialect_for(schema: Any) -> type[Validator] | None:
    """The draft named by ``schema``'s ``$schema`` (draft 2020-12 without one), or None if unknown.

    ``$schema`` only identifies the draft; it is never fetched.
    """
    if not isinstance(schema, dict) or "$schema" not in schema:
        return DEFAULT_DIALECT
    if not isinstance(schema["$schema"], str):
        return None
    try:
        cls = validators.validator_for(schema, default=None)
    except ValueError:  # not a URI at all (e.g. "http://[")
        return None
    return cls if cls in _SAFE else None


@functools.cache
def metaschema_validator(dialect: type[Validator]) -> Validator:
    """A validator of schema documents written in ``dialect`` (against its metaschema), for deploy.

    Formats are checked except ``regex``: the deploy validator checks patterns itself, with a
    message that says what RE2 refused.
    """
    safe = _SAFE[dialect]
    checker = FormatChecker(formats=())
    checker.checkers = {k: v for k, v in safe.FORMAT_CHECKER.checkers.items() if k != "regex"}
    # jsonschema adds the bundled metaschemas to any registry, so their references resolve.
    return safe(dialect.META_SCHEMA, registry=_NO_RETRIEVAL, format_checker=checker)


# jsonschema-rs gives the Python checkers' verdict on a valid document in microseconds where they take
# milliseconds (the metaschemas' $dynamicRef above all). It is trusted only when it says "valid": any
# other answer (invalid, an input it cannot take, an error) sends the document to the Python checker,
# which has the last word and writes the messages. Drafts 3 and 4 stay on Python alone: jsonschema-rs
# has no draft 3, and draft 4's "enum" must have unique items, where jsonschema-rs counts 1 and 1.0 as
# two values (the Python checker and JSON Schema count them as one).
_FAST_DIALECTS = {
    validators.Draft202012Validator: jsonschema_rs.Draft202012Validator,
    validators.Draft201909Validator: jsonschema_rs.Draft201909Validator,
    validators.Draft7Validator: jsonschema_rs.Draft7Validator,
    validators.Draft6Validator: jsonschema_rs.Draft6Validator,
}
# Deeper documents go to the Python checker: jsonschema-rs recurses on the native stack, and in a
# thread with a 64 KiB stack it crashes the process at 200 levels. A bundle's JSON has at most 64.
_FAST_MAX_DEPTH = 64
_JSON_SCALARS = frozenset((str, int, float, bool, type(None)))
# What jsonschema-rs raises on a value it cannot take (a lone surrogate, a non-text key).
_FAST_REFUSALS = (ValueError, TypeError, OverflowError, jsonschema_rs.ReferencingError)


class FastCheck:
    """jsonschema-rs applying one schema to plain JSON, trusted only when it finds no error."""

    def __init__(self, validator: Any):
        self._validator = validator

    def passes(self, instance: Any, *, plain: bool = False) -> bool:
        """True only if the schema surely accepts ``instance``; False means "ask the Python checker".

        ``plain``: the caller found ``is_plain_json`` true of ``instance`` or of a document holding
        it, so it is not walked again.
        """
        if self._validator is None or not (plain or is_plain_json(instance)):
            return False
        try:
            return self._validator.is_valid(instance) is True
        except _FAST_REFUSALS:
            return False


def fast_check(schema: dict, dialect: type[Validator], *, asserted_formats: Collection[str]) -> FastCheck:
    """A ``FastCheck`` of platform schema ``schema`` that agrees with the Python checker when it passes.

    Only for schemas whose patterns mean the same on RE2 and on Rust's regex crate (the metaschemas,
    ``MANIFEST_SCHEMA``: ASCII classes and anchors), never for a tenant's. ``asserted_formats`` are
    the formats the Python checker asserts: jsonschema-rs asserts none, so a schema that uses one of
    them gets a check that never passes. Nothing is ever fetched: the schema's own references and the
    bundled metaschemas resolve; a schema with any other reference gets a check that never passes.
    """
    fast = _FAST_DIALECTS.get(dialect)
    if fast is None or _formats_in(schema) & set(asserted_formats):
        return FastCheck(None)
    try:
        validator = fast(
            schema,
            validate_formats=False,
            retriever=_refuse_fetch,
            pattern_options=jsonschema_rs.RegexOptions(),  # linear time, like RE2
        )
    except _FAST_REFUSALS as err:
        logger.warning("jsonschema-rs cannot compile a platform schema, Python checks it: %s", err)
        return FastCheck(None)
    return FastCheck(validator)


@functools.cache
def fast_metaschema_check(dialect: type[Validator]) -> FastCheck:
    """The ``FastCheck`` counterpart of ``metaschema_validator(dialect)``."""
    asserted = metaschema_validator(dialect).format_checker.checkers
    vocabularies = [resource.contents for _, resource in METASCHEMAS.items()]
    if _formats_in(*vocabularies) & set(asserted):  # a vocabulary the metaschema refers to uses it
        return FastCheck(None)
    return fast_check(dialect.META_SCHEMA, dialect, asserted_formats=asserted)


def is_plain_json(value: Any) -> bool:
    """Whether ``value`` is JSON as ``json.loads`` gives it, at most ``_FAST_MAX_DEPTH`` levels deep.

    What a ``FastCheck`` may be given: jsonschema-rs reads a tuple as an array, which the Python
    checkers do not, and recurses on the native stack. (Keys are not looked at: jsonschema-rs refuses
    a key that is not text.)
    """
    level = [value]
    for _ in range(_FAST_MAX_DEPTH):
        deeper: list[Any] = []
        for node in level:
            kind = type(node)
            if kind is dict:
                deeper += [item for item in node.values() if type(item) not in _JSON_SCALARS]
            elif kind is list:
                deeper += [item for item in node if type(item) not in _JSON_SCALARS]
            elif kind not in _JSON_SCALARS:
                return False
        if not deeper:
            return True
        level = deeper
    return False


def _refuse_fetch(uri: str) -> Any:
    """jsonschema-rs's retriever: only what it holds resolves, nothing is ever fetched."""
    raise ValueError(f"nothing is retrieved: {uri}")


def _formats_in(*documents: Any) -> set[str]:
    """The values of every "format" keyword in ``documents`` (over-approximated: data counts too)."""
    used: set[str] = set()
    stack = list(documents)
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("format"), str):
                used.add(node["format"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return used


def local_lookup(schema: dict, dialect: type[Validator]) -> Callable[[str], Any]:
    """A function from a reference to its target inside ``schema`` alone, for deploy checks.

    Nothing is retrieved: a reference that leaves the document raises like one to nothing.
    The returned function raises ``referencing.exceptions.Unresolvable``.

    Raises:
        TypeError, ValueError, referencing.exceptions.Unresolvable: an ``$id`` it cannot use.
    """
    specification = referencing.jsonschema.specification_with(dialect.ID_OF(dialect.META_SCHEMA))
    resolver = _NO_RETRIEVAL.resolver_with_root(specification.create_resource(schema))
    return lambda ref: resolver.lookup(ref).contents


class SchemaValidator:
    """A tenant schema, compiled on first use; ``iter_errors`` never raises on a broken schema."""

    def __init__(self, schema: Any, dialect: type[Validator]):
        self.schema = schema
        self.dialect = dialect

    @property
    def asserted_formats(self) -> Collection[str]:
        """The formats this validator asserts (every one the dialect knows and the platform can check)."""
        return _SAFE[self.dialect].FORMAT_CHECKER.checkers.keys()

    @functools.cached_property
    def _validator(self) -> Validator:
        safe = _SAFE[self.dialect]
        return safe(self.schema, registry=_NO_RETRIEVAL, format_checker=safe.FORMAT_CHECKER)

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]:
        """Every way ``instance`` breaks the schema; a schema fault is one error with an error id."""
        try:
            errors = list(self._validator.iter_errors(instance))
        except SCHEMA_FAULTS as err:
            error_id = new_error_id()
            # No traceback: a RecursionError's would be a thousand frames of the library.
            detail = f"{type(err).__name__}: {err}"[:300]
            logger.warning("A schema could not be applied (error id %s): %s", error_id, detail)
            message = (
                f"the schema cannot be applied {error_id_note(error_id)}: "
                "it is broken or refers outside itself"
            )
            errors = [ValidationError(message)]
        yield from errors

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` meets the schema (a schema fault counts as not valid)."""
        return next(self.iter_errors(instance), None) is None


def compile_schema(schema: Any) -> SchemaValidator:
    """The validator of tenant (or platform) schema ``schema``; an unknown ``$schema`` means 2020-12."""
    return SchemaValidator(schema, dialect_for(schema) or DEFAULT_DIALECT)
