"""Deploy-time checks of handler code: each route's handler compiles and defines ``handle(request)``.

Without them a handler with a syntax error, no ``handle`` or a ``handle`` of the wrong arity deploys
and then fails at every call. Nothing here runs tenant code: the source is parsed and compiled
(``compile``, never ``exec``) in this process, and the module's top level is read as a syntax tree.
A ``handle`` bound some other way (imported, assigned, built by a decorator) can only be checked by
running the module, so it deploys with a warning instead.

Compiling hostile source is bounded: a handler file is at most ``MAX_HANDLER_BYTES``, nesting too
deep for the compiler is a problem rather than a crash, and past ``MAX_CHECKED_BYTES`` of source in
one deploy the remaining files are left to fail at their first call (one warning says which).
Problems read ``<pointer to the route's handler>: <file>:<line>:<column>: <message>``.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from apps_runtime.manifest.bundle import Bundle
from apps_runtime.manifest.problems import DeployRejected, Problem, ordered, pointer
from apps_runtime.manifest.validator import validate_manifest

KiB = 1024
MAX_HANDLER_BYTES = 256 * KiB
MAX_CHECKED_BYTES = 2 * 1024 * KiB
ENTRY_POINT = "handle"
# Names whose call at a module's top level can bind anything, ``handle`` included.
_DYNAMIC_CALLS = frozenset({"exec", "eval", "globals", "setattr", "vars", "__import__"})


@dataclass
class _Findings:
    """What one handler file gave: problems refuse the deploy, warnings do not."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_bundle(bundle: Bundle) -> list[Problem]:
    """The deploy validator's verdict on ``bundle``, its handler code included; returns the warnings.

    Raises:
        DeployRejected: every problem of the manifest and of the handlers' code, never just the first.
    """
    code_problems, code_warnings = check_handlers(bundle.manifest, bundle.files)
    try:
        manifest_warnings = validate_manifest(bundle.manifest, bundle.files)
    except DeployRejected as rejected:
        problems = ordered([*rejected.problems, *code_problems])
        raise DeployRejected(problems, warnings=ordered([*rejected.warnings, *code_warnings])) from None
    found_warnings = ordered([*manifest_warnings, *code_warnings])
    if code_problems:
        raise DeployRejected(ordered(code_problems), warnings=found_warnings)
    return found_warnings


def check_handlers(manifest: Any, files: Mapping[str, bytes]) -> tuple[list[Problem], list[Problem]]:
    """Problems and warnings of every route's handler file, each at the route's ``handler`` pointer.

    Routes whose handler is not a file of the bundle are skipped: the manifest validator reports them.
    """
    routes = manifest.get("routes") if isinstance(manifest, dict) else None
    if not isinstance(routes, dict):
        return [], []
    findings: dict[str, _Findings] = {}
    unchecked: list[str] = []
    budget = MAX_CHECKED_BYTES
    problems, found_warnings = [], []
    for key, spec in routes.items():
        path = spec.get("handler") if isinstance(spec, dict) else None
        if not isinstance(path, str) or path not in files:
            continue
        if path not in findings:
            source = files[path]
            if len(source) <= MAX_HANDLER_BYTES and len(source) > budget:
                unchecked.append(path)
                findings[path] = _Findings()
            else:
                budget -= len(source)
                findings[path] = check_handler_source(path, source)
        at = pointer("routes", key, "handler")
        problems += [Problem(at, message) for message in findings[path].problems]
        found_warnings += [Problem(at, message) for message in findings[path].warnings]
    if unchecked:
        found_warnings.append(Problem(pointer("routes"), _unchecked_message(unchecked)))
    return problems, found_warnings


def check_handler_source(path: str, source: bytes) -> _Findings:
    """Compile one handler file and check its top level for ``def handle(request)``."""
    if len(source) > MAX_HANDLER_BYTES:
        size = -(-len(source) // KiB)
        limit = MAX_HANDLER_BYTES // KiB
        return _Findings(
            [f"{path}: {size} KiB; a handler file is at most {limit} KiB: move code into modules it imports"]
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tree = ast.parse(source, filename=path)
            compile(tree, path, "exec", dont_inherit=True)
        except SyntaxError as err:
            return _Findings([_located(path, err.lineno, err.offset, err.msg)])
        except (RecursionError, MemoryError):
            return _Findings([f"{path}: nested too deeply to compile: split the expression"])
        except ValueError as err:  # e.g. null bytes, on some Python versions
            return _Findings([f"{path}: {err}"])
    findings = _entry_point_findings(path, tree)
    findings.warnings += [
        _located(path, w.lineno, None, str(w.message))
        for w in caught
        if issubclass(w.category, SyntaxWarning | DeprecationWarning)
    ]
    return findings


def _entry_point_findings(path: str, tree: ast.Module) -> _Findings:
    definitions, dynamic = [], None
    for node in _top_level(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == ENTRY_POINT:
            definitions.append(node)
        elif _is_handle_lambda(node):
            definitions.append(node)
        elif dynamic is None and _may_bind_handle(node):
            dynamic = node
    if definitions:
        return _Findings([p for node in definitions for p in _signature_problems(path, node)])
    if dynamic is not None:
        message = (
            f"{ENTRY_POINT} is not bound by a plain 'def {ENTRY_POINT}(request)' here, so it is checked "
            "only when a call runs it"
        )
        return _Findings(warnings=[_located(path, dynamic.lineno, dynamic.col_offset + 1, message)])
    return _Findings([f"{path}: defines no function {ENTRY_POINT}(request): add one at the top level"])


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run when the module loads: the body, and the branches of if/try/with/for/while."""
    for node in body:
        yield node
        for branch in ("body", "orelse", "finalbody"):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield from _top_level(getattr(node, branch, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from _top_level(handler.body)


def _is_handle_lambda(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == ENTRY_POINT
        and isinstance(node.value, ast.Lambda)
    )


def _may_bind_handle(node: ast.stmt) -> bool:
    """Whether ``node`` can bind ``handle`` other than by a plain def (imports, assignments, ...)."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return any(alias.name == "*" or (alias.asname or alias.name) == ENTRY_POINT for alias in node.names)
    if isinstance(node, ast.ClassDef):
        return node.name == ENTRY_POINT
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.name == "__getattr__"  # a module __getattr__ (PEP 562) answers any name
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id == ENTRY_POINT and isinstance(child.ctx, ast.Store):
            return True
        called = child.func if isinstance(child, ast.Call) else None
        if isinstance(called, ast.Name) and called.id in _DYNAMIC_CALLS:
            return True
    return False


def _signature_problems(path: str, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Assign) -> list[str]:
    """``handle`` must take the request as its one argument, and return (not await) its answer."""
    if isinstance(node, ast.Assign):
        args, decorated = node.value.args, False
    else:
        args, decorated = node.args, bool(node.decorator_list)
    where = (node.lineno, node.col_offset + 1)
    if isinstance(node, ast.AsyncFunctionDef):
        return [_located(path, *where, f"'async def {ENTRY_POINT}' returns a coroutine: use a plain def")]
    if decorated:
        return []  # a decorator may change the signature; the call will tell
    positional = [*args.posonlyargs, *args.args]
    required = len(positional) - len(args.defaults)
    keywords = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    required_keywords = [a.arg for a, default in keywords if default is None]
    shown = f"{ENTRY_POINT}({', '.join(a.arg for a in positional)})"
    if not positional and args.vararg is None:
        return [_located(path, *where, f"{shown} takes no argument: define {ENTRY_POINT}(request)")]
    if required > 1:
        message = f"{shown} needs {required} arguments; the platform passes one, the request"
        return [_located(path, *where, message)]
    if required_keywords:
        names = ", ".join(required_keywords)
        message = f"{ENTRY_POINT} requires keyword argument(s) {names}: give them defaults"
        return [_located(path, *where, message)]
    return []


def _located(path: str, line: int | None, column: int | None, message: str) -> str:
    """``file:line:column: message``, with whatever part of the location is known."""
    where = f"{path}:{line}" if line else path
    where += f":{column}" if line and column else ""
    return f"{where}: {message}"


def _unchecked_message(paths: list[str]) -> str:
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    limit = MAX_CHECKED_BYTES // (1024 * KiB)
    return f"handler code past {limit} MiB is not checked at deploy, only when it runs: {shown}"
