"""What the builder endpoint's tools do, synchronously, for one tenant admin.

Each operation takes the tenant, the acting user and the tool's arguments, calls the platform's own
actions (``apps_runtime.deploy``: the deploy's one validation, its audit rows) and answers JSON.
Refusals raise ``BuilderError`` with the problems, which the server maps to an ``isError`` result.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from apps_runtime.bundles import unpack_files
from apps_runtime.deploy import deploy_bundle, rollback_app, undeploy_app, validate_bundle
from apps_runtime.manifest import MANIFEST_SCHEMA, DeployRejected, Problem, bundle_from_mapping
from apps_runtime.models import App, AppVersion, HandlerError, Tool
from builder.exceptions import BuilderError
from mcp_gateway.tools.call import preview
from tenants.exceptions import InvalidValue
from tenants.models import Tenant

ERRORS_LIMIT_MAX = 50
MAX_FILE_CHARS = 200_000  # get_app: a file past this is listed, not sent


def _bundle(arguments: dict):
    """The bundle of a ``{"manifest", "files"}`` argument pair.

    Raises:
        DeployRejected: the files are not a readable bundle (a hostile path, a size limit).
    """
    return bundle_from_mapping(arguments["manifest"], arguments.get("files") or {})


def _problems(rejected: DeployRejected) -> dict:
    return {
        "problems": [{"pointer": p.pointer, "message": p.message} for p in rejected.problems],
        "warnings": [str(w) for w in rejected.warnings],
    }


def validate_app(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    try:
        found = validate_bundle(tenant, _bundle(arguments))
    except DeployRejected as rejected:
        return {"valid": False, **_problems(rejected), "tools": []}
    tools = [{"name": name, "wireName": wire} for name, wire in found.tools]
    return {"valid": True, "problems": [], "warnings": [str(w) for w in found.warnings], "tools": tools}


def deploy_app(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    try:
        result = deploy_bundle(tenant, _bundle(arguments), acting_user=user)
    except DeployRejected as rejected:
        raise BuilderError("deploy refused", _problems(rejected)) from None
    return _deployed(result)


def _deployed(result) -> dict:
    return {
        "app": result.app.name,
        "version": result.version.number,
        "tools": [{"name": name, "wireName": wire} for name, wire in result.tools],
        "warnings": [str(w) for w in result.warnings],
    }


def rollback(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    try:
        return _deployed(rollback_app(tenant, arguments["app"], acting_user=user))
    except DeployRejected as rejected:
        raise BuilderError("rollback refused", _problems(rejected)) from None


def undeploy(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    try:
        app = undeploy_app(tenant, arguments["app"], acting_user=user)
    except DeployRejected as rejected:
        raise BuilderError("undeploy refused", _problems(rejected)) from None
    return {"app": app.name, "undeployed": True}


def list_apps(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    apps = App.objects.for_tenant(tenant).select_related("active_version").order_by("name")
    wires: dict[int, list[str]] = {}
    for app_id, wire in (
        Tool.objects.for_tenant(tenant).order_by("position").values_list("app_id", "wire_name")
    ):
        wires.setdefault(app_id, []).append(wire)
    return {
        "apps": [
            {
                "name": app.name,
                "activeVersion": app.active_version.number if app.active_version else None,
                "tools": wires.get(app.pk, []),
            }
            for app in apps
        ]
    }


def get_app(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    app = (
        App.objects.for_tenant(tenant).select_related("active_version").filter(name=arguments["app"]).first()
    )
    if app is None:
        raise BuilderError("no such app", {"problems": [_missing_app(arguments["app"])]})
    versions = AppVersion.objects.for_tenant(tenant).filter(app=app)
    number = arguments.get("version")
    if number is not None:
        version = versions.filter(number=number).first()
        if version is None:
            problem = {"pointer": "/version", "message": f"app '{app.name}' has no version {number}"}
            raise BuilderError("no such version", {"problems": [problem]})
    else:  # the active version, or the newest of an undeployed app
        version = app.active_version or versions.order_by("-number").first()
    if version is None:
        raise BuilderError("no such version", {"problems": [_missing_app(app.name)]})
    files, skipped = {}, []
    for path, data in sorted(unpack_files(bytes(version.bundle)).items()):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            skipped.append(path)
            continue
        if len(text) > MAX_FILE_CHARS:
            skipped.append(path)
        elif path != "app.json":
            files[path] = text
    return {
        "app": app.name,
        "version": version.number,
        "active": app.active_version_id == version.pk,
        "versions": list(versions.order_by("number").values_list("number", flat=True)),
        "manifest": version.manifest,
        "files": files,
        "filesNotShown": skipped,
    }


def _missing_app(name: str) -> dict:
    return {"pointer": "/name", "message": f"no app '{name}' in this tenant: list_apps names them"}


def list_errors(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    limit = min(int(arguments.get("limit") or 20), ERRORS_LIMIT_MAX)
    errors = HandlerError.objects.for_tenant(tenant).select_related("app").defer("trace", "logs")
    if arguments.get("app"):
        errors = errors.filter(app__name=arguments["app"])
    return {
        "errors": [
            {
                "errorId": error.error_id,
                "kind": error.kind,
                "app": error.app.name if error.app else None,
                "version": error.version_number,
                "route": error.route_key,
                "caller": error.caller,
                "at": error.created_at.isoformat(),
            }
            for error in errors.order_by("-id")[:limit]
        ]
    }


def get_error(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    error = (
        HandlerError.objects.for_tenant(tenant)
        .select_related("app")
        .filter(error_id=arguments["errorId"])
        .first()
    )
    if error is None:
        problem = {
            "pointer": "/errorId",
            "message": "no such error id in this tenant: list_errors names them",
        }
        raise BuilderError("no such error", {"problems": [problem]})
    return {
        "errorId": error.error_id,
        "kind": error.kind,
        "app": error.app.name if error.app else None,
        "version": error.version_number,
        "route": error.route_key,
        "caller": error.caller,
        "at": error.created_at.isoformat(),
        "trace": error.trace,
        "logs": error.logs,
    }


def preview_tools(tenant: Tenant, user: AbstractBaseUser, arguments: dict) -> dict:
    roles = list(arguments.get("roles") or [])
    try:
        caller = preview.role_caller(tenant, roles)
    except InvalidValue as err:
        raise BuilderError(
            "invalid roles", {"problems": [{"pointer": "/roles", "message": str(err)}]}
        ) from None
    listing = preview.tools_list(tenant, caller)
    return {
        "roles": roles,
        "tools": [
            {"name": tool["name"], "title": tool.get("title"), "description": tool.get("description")}
            for tool in listing.tools
        ],
        "count": listing.count,
        "estimatedTokens": listing.estimated_tokens,
    }


def manifest_schema() -> dict[str, Any]:
    return MANIFEST_SCHEMA


def problem_lines(problems: list[dict]) -> list[str]:
    """Problems as the contract prints them: ``<pointer>: <message>``."""
    return [str(Problem(p["pointer"], p["message"])) for p in problems]
