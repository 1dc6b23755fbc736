"""The handler SDK: the ``request`` object a handler receives and the errors it can raise or catch.

Inside the child this module is also registered as ``platform_sdk``, so handlers write
``from platform_sdk import NotFound, UserError``. Every data call goes to the platform through one
``transport(op, args)`` callable; the handler never holds a database handle or a credential.
"""

import base64
import math
import re
import sys
from collections.abc import Callable
from typing import Any

from . import protocol

Transport = Callable[[str, dict], Any]
Notify = Callable[[str, dict], None]  # sends a notice (protocol.NOTICE_OPS) without waiting


class RecordsError(Exception):
    """A data call failed; ``code`` is one of not_found, permission_denied, invalid, limit."""

    code = "error"
    status = 500

    def __init__(self, code: str, message: str, *, op: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.op = op  # the data operation that failed, or None when the handler raised it itself

    def response_status(self) -> int:
        """HTTP status the call answers with when the handler lets this error escape."""
        return self.status


class _CodedError(RecordsError):
    def __init__(self, message: str, *, op: str | None = None):
        super().__init__(type(self).code, message, op=op)


class NotFound(_CodedError):
    """The record does not exist, or the caller may not see it."""

    code = "not_found"
    status = 404


class PermissionDenied(_CodedError):
    """The caller may not perform this operation."""

    code = "permission_denied"
    status = 403

    def response_status(self) -> int:
        # A record the caller may not read looks exactly like a missing one.
        return 404 if self.op in protocol.READ_OPS else 403


class ValidationFailed(_CodedError):
    """The data was rejected by the collection's schema or rules."""

    code = "invalid"
    status = 400


class LimitExceeded(_CodedError):
    """A quota was hit, e.g. too many data calls in one invocation."""

    code = "limit"
    status = 429


class EgressRefused(RecordsError):
    """The platform did not make (or finish) an outbound request: ``rule`` says why in words a developer
    acts on; ``retryable`` is True when the same request may work later (a timeout, a busy budget, an
    upstream that did not answer) and False when a rule refused it (fix the app, secret or connection).
    """

    status = 403

    def __init__(self, rule: str, *, retryable: bool = False, op: str | None = None):
        code = protocol.EGRESS_RETRYABLE if retryable else protocol.EGRESS_REFUSED
        super().__init__(code, rule, op=op)
        self.rule = rule
        self.retryable = retryable

    def response_status(self) -> int:
        return 503 if self.retryable else 403


_ERRORS_BY_CODE = {cls.code: cls for cls in (NotFound, PermissionDenied, ValidationFailed, LimitExceeded)}


def records_error(code: str, message: str, op: str) -> RecordsError:
    """Build the exception a handler sees for a failed data call."""
    if code in (protocol.EGRESS_REFUSED, protocol.EGRESS_RETRYABLE):
        return EgressRefused(message, retryable=code == protocol.EGRESS_RETRYABLE, op=op)
    cls = _ERRORS_BY_CODE.get(code)
    if cls is None:
        return RecordsError(code, message, op=op)
    return cls(message, op=op)


class UserError(Exception):
    """Raise to answer the caller with ``{"error": message}`` and a 4xx/5xx status instead of failing."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = str(message)
        self.status = status


class InputRequired(BaseException):
    """Raised by ``request.ask`` while the caller has not answered: the platform asks, then runs the
    handler again from the start with the answers. A BaseException, so ``except Exception`` in a
    handler does not swallow it.
    """

    def __init__(self, questions: dict):
        super().__init__(f"input required: {', '.join(questions)}")
        self.questions = questions


# What a handler may ask its caller's client, and the client capability each needs.
ELICIT, SAMPLE, ROOTS = "elicitation/create", "sampling/createMessage", "roots/list"
CAPABILITY_OF = {ELICIT: "elicitation", SAMPLE: "sampling", ROOTS: "roots"}
# The key a client's answer to each kind of question always has (ElicitResult, CreateMessageResult,
# ListRootsResult): an answer without it does not answer that question, which is asked again.
_ANSWER_KEY = {ELICIT: "action", SAMPLE: "content", ROOTS: "roots"}


def elicit(message: str, schema: dict) -> dict:
    """A question for the user: a form (``schema``: an object of string, number, integer, boolean
    and enum fields, with defaults) shown with ``message``. Its answer is ``{"action": "accept" |
    "decline" | "cancel", "content": {...}}``.
    """
    if not isinstance(message, str) or not isinstance(schema, dict):
        raise TypeError("elicit() takes a message (str) and a schema (dict)")
    return {"method": ELICIT, "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def sample(prompt: str, *, max_tokens: int = 500, system_prompt: str | None = None) -> dict:
    """A question for the client's model; its answer is ``{"role", "content": {"type": "text",
    "text"}, "model", "stopReason"}``.
    """
    if not isinstance(prompt, str) or type(max_tokens) is not int or max_tokens < 1:
        raise TypeError("sample() takes a prompt (str) and max_tokens (a positive int)")
    params: dict = {
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    }
    if system_prompt is not None:
        params["systemPrompt"] = str(system_prompt)
    return {"method": SAMPLE, "params": params}


def list_roots() -> dict:
    """A request for the client's roots; its answer is ``{"roots": [{"uri", "name"}, ...]}``."""
    return {"method": ROOTS, "params": {}}


class Records:
    """Record access acting as the caller; every method is one data call to the platform."""

    def __init__(self, transport: Transport):
        self._transport = transport

    def query(
        self,
        collection: str,
        where: dict | None = None,
        order_by: str | list | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> dict:
        """Return ``{"items": [...], "next_cursor": str | None}``."""
        args = {
            "collection": collection,
            "where": where,
            "order_by": order_by,
            "limit": limit,
            "cursor": cursor,
        }
        return self._transport(protocol.RECORDS_QUERY, args)

    def get(self, collection: str, id: str) -> dict:
        """Return one record; raises NotFound when missing or not readable."""
        return self._transport(protocol.RECORDS_GET, {"collection": collection, "id": id})

    def create(self, collection: str, data: dict) -> dict:
        """Create a record and return it."""
        return self._transport(protocol.RECORDS_CREATE, {"collection": collection, "data": data})

    def update(self, collection: str, id: str, data: dict) -> dict:
        """Merge ``data`` into a record and return it."""
        return self._transport(protocol.RECORDS_UPDATE, {"collection": collection, "id": id, "data": data})

    def delete(self, collection: str, id: str) -> Any:
        """Delete a record."""
        return self._transport(protocol.RECORDS_DELETE, {"collection": collection, "id": id})


_SECRET_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


class Http:
    """Outbound HTTP, made by the platform for the handler: each call is one data call, and the host
    checks the destination against the app's ``egress`` (docs/egress.md). Every method returns
    ``{"status": int, "headers": {...}, "json": <parsed body or None>, "text": str}`` and raises
    ``EgressRefused`` when the platform refuses or cannot finish the request.
    """

    def __init__(self, transport: Transport):
        self._transport = transport

    def request(
        self,
        method: str,
        url: str,
        *,
        params: dict | None = None,
        headers: dict | None = None,
        json: Any = None,
        data: str | dict | None = None,
        timeout: float | None = None,
        connection: str | None = None,
    ) -> dict:
        """Send ``method`` to ``url``; ``connection`` names a manifest connection whose caller's token
        the platform adds as ``Authorization: Bearer``.
        """
        args: dict = {"method": method, "url": url}
        optional = {"params": params, "headers": headers, "data": data, "timeout": timeout}
        args.update((key, value) for key, value in optional.items() if value is not None)
        if json is not None:
            args["json"] = json
        if connection is not None:
            args["connection"] = connection
        return self._transport(protocol.HTTP_REQUEST, args)

    def get(self, url: str, *, params=None, headers=None, timeout=None, connection=None) -> dict:
        return self.request(
            "GET", url, params=params, headers=headers, timeout=timeout, connection=connection
        )

    def post(self, url: str, *, json=None, data=None, headers=None, timeout=None, connection=None) -> dict:
        return self.request(
            "POST", url, json=json, data=data, headers=headers, timeout=timeout, connection=connection
        )

    def put(self, url: str, *, json=None, data=None, headers=None, timeout=None, connection=None) -> dict:
        return self.request(
            "PUT", url, json=json, data=data, headers=headers, timeout=timeout, connection=connection
        )

    def patch(self, url: str, *, json=None, data=None, headers=None, timeout=None, connection=None) -> dict:
        return self.request(
            "PATCH", url, json=json, data=data, headers=headers, timeout=timeout, connection=connection
        )

    def delete(self, url: str, *, json=None, data=None, headers=None, timeout=None, connection=None) -> dict:
        return self.request(
            "DELETE", url, json=json, data=data, headers=headers, timeout=timeout, connection=connection
        )


def secret(name: str) -> str:
    """An opaque placeholder for the tenant secret ``name``: the platform puts the value in place only in
    the URL, headers or body of an outbound request to an ``egress`` destination.
    """
    if not isinstance(name, str) or not _SECRET_NAME.fullmatch(name):
        raise ValueError(f"secret() takes a name like API_TOKEN ({_SECRET_NAME.pattern}), not {name!r:.70}")
    return protocol.SECRET_PLACEHOLDER % name


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite")
    return value


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    return value[: protocol.MAX_NOTICE_CHARS]


class Notices:
    """Progress and log lines for whoever waits on the call (an MCP client); bounded, never blocking.

    Progress is paced (``protocol.Pacer``: a short burst, then ``PROGRESS_PER_SECOND``; the latest
    wins, the last one is sent when the handler returns) and sent only when it moved forward; at most
    ``MAX_LOG_NOTICES`` log lines are sent, and every line also goes to the run's log (stderr).
    """

    def __init__(self, notify: Notify | None):
        self._notify = notify
        self._pending: dict | None = None
        self._pacer = protocol.progress_pacer()
        self._last_done = -math.inf
        self._logs = 0

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        args = {"done": _number("done", done)}
        if total is not None:
            args["total"] = _number("total", total)
        if message is not None:
            args["message"] = _text("message", message)
        if done <= self._last_done:
            return  # progress only moves forward
        self._last_done = done
        self._pending = args
        if self._pacer.take():
            self.flush()

    def log(self, level: str, message: str) -> None:
        if level not in protocol.LOG_LEVELS:
            raise ValueError(f"level must be one of {', '.join(protocol.LOG_LEVELS)}")
        line = _text("message", message)
        print(f"[{level}] {line}", file=sys.stderr)
        self._logs += 1
        if self._notify is not None and self._logs <= protocol.MAX_LOG_NOTICES:
            self._notify(protocol.LOG, {"level": level, "message": line})

    def flush(self) -> None:
        """Send the progress held back by the pacing, if any."""
        if self._pending is not None and self._notify is not None:
            self._notify(protocol.PROGRESS, self._pending)
        self._pending = None


class Request:
    """What ``handle(request)`` receives."""

    def __init__(self, data: dict, transport: Transport, notify: Notify | None = None):
        self.method: str = data.get("method") or "GET"
        self.path: str = data.get("path") or ""
        self.body: dict = data.get("body") if data.get("body") is not None else {}
        self.query: dict = data.get("query") or {}
        self.params: dict = data.get("params") or {}
        self.tool: dict | None = data.get("tool")
        self.user: dict | None = data.get("user")
        self.records = Records(transport)
        self.http = Http(transport)
        self._answers: dict = data.get("answers") or {}
        self._can_ask = frozenset(data.get("can_ask") or ())
        # The MCP caller's W3C trace context (``00-<trace id>-<span id>-<flags>``), or None.
        self.traceparent: str | None = data.get("traceparent")
        self._transport = transport
        self._notices = Notices(notify)

    @staticmethod
    def secret(name: str) -> str:
        """The placeholder of tenant secret ``name`` for ``request.http`` (see ``secret``)."""
        return secret(name)

    def enqueue(self, route_key: str, body: Any = None) -> str:
        """Queue a background run of another route of this app; returns the run id."""
        return self._transport(protocol.JOBS_ENQUEUE, {"route": route_key, "body": body})

    def ask(self, questions: dict) -> dict:
        """Ask the caller's client ``questions`` (``{key: elicit(...) | sample(...) | list_roots()}``).

        Returns ``{key: answer}`` once every question is answered. Until then it raises
        ``InputRequired``: the platform puts the unanswered questions to the client and runs the
        handler again from the start with the answers so far, so ask before changing anything.
        Questions asked together reach the client together; ``ask`` again for a later round.
        """
        if not isinstance(questions, dict) or not questions:
            raise ValueError("ask() takes a non-empty dict of questions")
        for key, question in questions.items():
            if (
                not isinstance(key, str)
                or not isinstance(question, dict)
                or question.get("method") not in _ANSWER_KEY
            ):
                raise ValueError(
                    f"ask(): {key!r:.40} is not a question built by elicit(), sample() or list_roots()"
                )
        unanswered = {
            key: question
            for key, question in questions.items()
            if not isinstance(self._answers.get(key), dict)
            or _ANSWER_KEY[question["method"]] not in self._answers[key]
        }
        if unanswered:
            raise InputRequired(unanswered)
        return {key: self._answers[key] for key in questions}

    def can_ask(self, kind: str) -> bool:
        """Whether the caller's client can answer ``kind`` of question: elicitation, sampling or roots."""
        return kind in self._can_ask

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress to the caller (an MCP client that asked for it); a no-op for everyone else."""
        self._notices.progress(done, total, message)

    def log(self, level: str, message: str) -> None:
        """A log line for the caller (an MCP client) and the run's log; ``level`` as in RFC 5424."""
        self._notices.log(level, message)

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.path}>"


# MCP content a handler may return as ``{"content": [...]}`` instead of plain JSON. These build the
# items; the platform checks them again (types, sizes, MIME types) before any reaches a client.
# Raster formats only: an SVG can carry script.
IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
AUDIO_MIME_TYPES = ("audio/wav", "audio/mpeg", "audio/ogg", "audio/flac")


def text(value: str) -> dict:
    """A text item for ``{"content": [...]}``."""
    if not isinstance(value, str):
        raise TypeError(f"text() takes a str, not {type(value).__name__}")
    return {"type": "text", "text": value}


def image(data: bytes, mime_type: str) -> dict:
    """An image item from its bytes (sent base64-encoded); ``mime_type`` one of ``IMAGE_MIME_TYPES``."""
    if not isinstance(data, bytes | bytearray):
        raise TypeError(f"image() takes bytes, not {type(data).__name__}")
    if mime_type not in IMAGE_MIME_TYPES:
        raise ValueError(f"image() takes one of {', '.join(IMAGE_MIME_TYPES)}, not {mime_type!r}")
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def audio(data: bytes, mime_type: str) -> dict:
    """An audio item from its bytes (sent base64-encoded); ``mime_type`` one of ``AUDIO_MIME_TYPES``."""
    if not isinstance(data, bytes | bytearray):
        raise TypeError(f"audio() takes bytes, not {type(data).__name__}")
    if mime_type not in AUDIO_MIME_TYPES:
        raise ValueError(f"audio() takes one of {', '.join(AUDIO_MIME_TYPES)}, not {mime_type!r}")
    return {"type": "audio", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def embedded_resource(uri: str, content: str | bytes, mime_type: str | None = None) -> dict:
    """A resource embedded in the result: ``content`` as text (str) or as a base64 blob (bytes)."""
    if not isinstance(uri, str):
        raise TypeError(f"embedded_resource() takes a str uri, not {type(uri).__name__}")
    resource: dict = {"uri": uri}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    if isinstance(content, str):
        resource["text"] = content
    elif isinstance(content, bytes | bytearray):
        resource["blob"] = base64.b64encode(content).decode("ascii")
    else:
        raise TypeError(f"embedded_resource() takes str or bytes content, not {type(content).__name__}")
    return {"type": "resource", "resource": resource}


def resource_link(
    route_path: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
) -> dict:
    """A link to one of this app's own routes, e.g. ``resource_link("/cases/42", "Case 42")``.

    ``route_path`` is the path under the app, with an optional query; the platform makes the
    absolute URL (``<origin>/t/<tenant>/apps/<app><route_path>``).
    """
    if not isinstance(route_path, str) or not route_path.startswith("/"):
        raise ValueError(f"resource_link() takes a path starting with '/', not {route_path!r:.60}")
    item = {"type": "resource_link", "route": route_path, "name": name}
    optional = {"title": title, "description": description, "mimeType": mime_type}
    return {**item, **{key: value for key, value in optional.items() if value is not None}}


# Handlers see these classes as living in ``platform_sdk`` (tracebacks print the module name).
for _cls in (
    RecordsError,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    LimitExceeded,
    EgressRefused,
    UserError,
    InputRequired,
    Request,
    Records,
    Http,
):
    _cls.__module__ = "platform_sdk"
del _cls
