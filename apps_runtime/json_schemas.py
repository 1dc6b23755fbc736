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
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import re2
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import FormatChecker, _keywords, _legacy_keywords, _utils, validators
from jsonschema.exceptions import UnknownType, ValidationError
from jsonschema.protocols import Validator

from tenants.error_ids import new_error_id

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
    copies = _on_re2(_utils, _keywords, _legacy_keywords)
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
                f"the schema cannot be applied (error id {error_id}): it is broken or refers outside itself"
            )
            errors = [ValidationError(message)]
        yield from errors

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` meets the schema (a schema fault counts as not valid)."""
        return next(self.iter_errors(instance), None) is None


def compile_schema(schema: Any) -> SchemaValidator:
    """The validator of tenant (or platform) schema ``schema``; an unknown ``$schema`` means 2020-12."""
    return SchemaValidator(schema, dialect_for(schema) or DEFAULT_DIALECT)
