"""App API: deploy bundles, list apps, their versions and tools; read handler errors, call logs, job runs."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db.models import Prefetch
from django.http import JsonResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from apps_runtime.api.parsers import DeployJSONParser
from apps_runtime.api.serializers import (
    AppSerializer,
    AppVersionSerializer,
    CallLogListSerializer,
    CallLogSerializer,
    DeployJsonSerializer,
    HandlerErrorListSerializer,
    HandlerErrorSerializer,
    JobRunDetailSerializer,
    JobRunSerializer,
    OutboundRequestSerializer,
    SecretSerializer,
    SecretValueSerializer,
    ServiceAccountSerializer,
    ServiceAccountStartSerializer,
    ValidationSerializer,
)
from apps_runtime.deploy import DeployResult, deploy_bundle, rollback_app, validate_bundle
from apps_runtime.egress import connections, secrets
from apps_runtime.manifest import (
    Bundle,
    BundleTooLarge,
    DeployRejected,
    Problem,
    bundle_from_mapping,
    read_bundle_upload,
)
from apps_runtime.manifest.schema import MANIFEST_SCHEMA
from apps_runtime.models import App, AppVersion, CallLog, HandlerError, JobRun, OutboundRequest, Tool
from tenants.api.views import TenantAPIView

BUNDLE_FIELD = "bundle"


class AppListView(TenantAPIView):
    parser_classes = [DeployJSONParser, MultiPartParser]

    @extend_schema(responses=AppSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        tools = Prefetch(
            "tools",
            queryset=Tool.objects.for_tenant(self.tenant).order_by("position"),
            to_attr="active_tools",
        )
        apps = App.objects.for_tenant(self.tenant).select_related("active_version").prefetch_related(tools)
        return Response(AppSerializer(apps, many=True).data)

    @extend_schema(
        request={
            "application/json": DeployJsonSerializer,
            "multipart/form-data": {
                "type": "object",
                "properties": {BUNDLE_FIELD: {"type": "string", "format": "binary"}},
                "required": [BUNDLE_FIELD],
            },
        },
        responses={201: AppSerializer},
        description="Deploy a bundle: a .zip in the `bundle` form field, or JSON with manifest and files.",
    )
    def post(self, request: Request, slug: str) -> Response:
        result = deploy_bundle(self.tenant, posted_bundle(request), acting_user=request.user)
        return Response(deployed_body(result), status=status.HTTP_201_CREATED)


def deployed_body(result: DeployResult) -> dict:
    """The app as a deploy or a rollback left it, its tools and the version's warnings."""
    result.app.active_tools = list(
        Tool.objects.for_tenant(result.app.tenant_id).filter(app=result.app).order_by("position")
    )
    body = AppSerializer(result.app).data
    body["warnings"] = [str(w) for w in result.warnings]
    return body


class AppRollbackView(TenantAPIView):
    @extend_schema(
        request=None,
        responses=AppSerializer,
        description="Switch an app back to the version before its active one (422 when there is none).",
    )
    def post(self, request: Request, slug: str, app: str) -> Response:
        return Response(deployed_body(rollback_app(self.tenant, app, acting_user=request.user)))


def posted_bundle(request: Request) -> Bundle:
    """The bundle sent: a .zip in the ``bundle`` form field, or JSON ``{"manifest", "files"}``.

    Raises:
        ValidationError: a form upload without a ``bundle`` field, or JSON without manifest and files.
        BundleTooLarge: a JSON body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, or an archive too big.
        DeployRejected: the archive or the files are not a readable bundle, or JSON nested too deep.
    """
    try:
        upload = request.FILES.get(BUNDLE_FIELD)
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        message = (
            f"the request body is over {limit} bytes: upload the bundle as a .zip "
            f"in the form field '{BUNDLE_FIELD}' (multipart/form-data)"
        )
        raise BundleTooLarge([Problem("/", message)]) from None
    if upload is not None:
        return read_bundle_upload(upload)
    if request.content_type.startswith("multipart/form-data"):
        sent = ", ".join(repr(name[:40]) for name in sorted({*request.FILES, *request.data})[:5])
        message = f"upload the .zip in the form field '{BUNDLE_FIELD}' (this form sent {sent or 'none'})"
        raise ValidationError({BUNDLE_FIELD: [message]})
    serializer = DeployJsonSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    return bundle_from_mapping(serializer.validated_data["manifest"], serializer.validated_data["files"])


class AppValidateView(TenantAPIView):
    parser_classes = [DeployJSONParser, MultiPartParser]

    @extend_schema(
        request={"application/json": DeployJsonSerializer},
        responses={200: ValidationSerializer},
        description=(
            "Validate a bundle as a deploy would (same body), deploying nothing: `valid`, every problem "
            "(pointer and message), every warning, and the wire names the tools would get."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        try:
            found = validate_bundle(self.tenant, posted_bundle(request))
        except BundleTooLarge:
            raise  # refused before it was read, as a deploy refuses it: 413
        except DeployRejected as rejected:
            members = rejected.problem_members()
            body = {"valid": False, "problems": members["problems"], "warnings": members["warnings"]}
            return Response({**body, "tools": []})
        return Response(
            {
                "valid": True,
                "problems": [],
                "warnings": [str(w) for w in found.warnings],
                "tools": [{"name": name, "wire_name": wire} for name, wire in found.tools],
            }
        )


class AppVersionListView(TenantAPIView):
    @extend_schema(responses=AppVersionSerializer(many=True))
    def get(self, request: Request, slug: str, app: str) -> Response:
        versions = AppVersion.objects.for_tenant(self.tenant).filter(app__name=app).order_by("-number")
        return Response(AppVersionSerializer(versions, many=True).data)


ERRORS_PAGE_DEFAULT = 20
ERRORS_PAGE_MAX = 100


def _cursor_page_parameters(rows: str) -> list[OpenApiParameter]:
    """The query parameters of a list paged by ``_cursor_page``, for its schema."""
    return [
        OpenApiParameter("app", str, description=f"only this app's {rows}"),
        OpenApiParameter("since", str, description=f"the cursor of an earlier answer: only newer {rows}"),
        OpenApiParameter("limit", int, description=f"1 to {ERRORS_PAGE_MAX}, default {ERRORS_PAGE_DEFAULT}"),
    ]


class HandlerErrorListView(TenantAPIView):
    @extend_schema(
        operation_id="tenants_errors_list",
        responses=HandlerErrorListSerializer,
        parameters=_cursor_page_parameters("errors"),
        description=(
            "The tenant's handler errors (trace of the tenant's own frames, and logs), oldest first: the "
            "newest `limit` ones, or with `since` the first `limit` ones after that cursor. `cursor` is "
            "what to send as `since` next (for `lcp errors --follow` and `lcp dev`)."
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        params = request.query_params
        errors = HandlerError.objects.for_tenant(self.tenant).select_related("app")
        if _text_param(params, "app"):
            errors = errors.filter(app__name=params["app"])
        page, cursor = _cursor_page(errors, params)
        return Response({"errors": HandlerErrorSerializer(page, many=True).data, "cursor": cursor})


def _cursor_page(rows, params) -> tuple[list, str]:
    """The errors' and the call logs' paging: the newest ``limit`` rows, or with ``since`` the first
    ``limit`` rows after that cursor, oldest first; and the cursor to send as ``since`` next."""
    limit = _bounded_int(params, "limit", ERRORS_PAGE_DEFAULT, ERRORS_PAGE_MAX)
    since = _bounded_int(params, "since", 0, 2**62, low=0) if params.get("since") else None
    if since is None:
        page = list(rows.order_by("-id")[:limit])[::-1]
        cursor = page[-1].pk if page else 0
    else:
        page = list(rows.filter(id__gt=since).order_by("id")[:limit])
        cursor = page[-1].pk if page else since
    return page, str(cursor)


class CallLogListView(TenantAPIView):
    @extend_schema(
        operation_id="tenants_logs_list",
        responses=CallLogListSerializer,
        parameters=_cursor_page_parameters("logs"),
        description=(
            "What the tenant's successful handler runs printed or logged (a failed run's logs are in its "
            "error), oldest first, paged as the errors are: `cursor` is what to send as `since` next (for "
            "`lcp logs --follow` and `lcp dev`). Kept a short while and capped per app and per tenant "
            "(RETENTION_CALL_LOG_*)."
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        params = request.query_params
        logs = CallLog.objects.for_tenant(self.tenant).select_related("app")
        if _text_param(params, "app"):
            logs = logs.filter(app__name=params["app"])
        page, cursor = _cursor_page(logs, params)
        return Response({"logs": CallLogSerializer(page, many=True).data, "cursor": cursor})


def _text_param(params, name: str) -> str:
    """Query parameter ``name`` as text to filter by ("" when absent).

    Raises:
        ValidationError: it holds a NUL, which no stored name has and PostgreSQL refuses in a query.
    """
    value = params.get(name) or ""
    if "\x00" in value:
        raise ValidationError({name: ["no NUL characters"]})
    return value


def _bounded_int(params, name: str, default: int, high: int, *, low: int = 1) -> int:
    """Query parameter ``name`` as an int from ``low`` to ``high``.

    Raises:
        ValidationError: not an integer, or out of bounds.
    """
    try:
        value = int(params.get(name, default))
    except ValueError as err:
        raise ValidationError({name: ["an integer"]}) from err
    if not low <= value <= high:
        raise ValidationError({name: [f"from {low} to {high}"]})
    return value


class HandlerErrorView(TenantAPIView):
    @extend_schema(responses=HandlerErrorSerializer)
    def get(self, request: Request, slug: str, error_id: str) -> Response:
        error = (
            HandlerError.objects.for_tenant(self.tenant)
            .select_related("app")
            .filter(error_id=error_id)
            .first()
        )
        if error is None:
            raise NotFound("no such error id")
        return Response(HandlerErrorSerializer(error).data)


RUNS_PAGE_DEFAULT = 50
RUNS_PAGE_MAX = 500


class JobRunListView(TenantAPIView):
    @extend_schema(
        responses=JobRunSerializer(many=True),
        parameters=[
            OpenApiParameter("app", str, description="only this app's runs"),
            OpenApiParameter("job", str, description="only this scheduled job's runs"),
            OpenApiParameter("status", str, enum=JobRun.Status.values),
            OpenApiParameter("limit", int, description=f"1 to {RUNS_PAGE_MAX}, default {RUNS_PAGE_DEFAULT}"),
        ],
        description="The tenant's job runs, newest first.",
    )
    def get(self, request: Request, slug: str) -> Response:
        runs = JobRun.objects.for_tenant(self.tenant).select_related("app").order_by("-enqueued_at", "-id")
        params = request.query_params
        if _text_param(params, "app"):
            runs = runs.filter(app__name=params["app"])
        if _text_param(params, "job"):
            runs = runs.filter(job=params["job"])
        if params.get("status"):
            if params["status"] not in JobRun.Status.values:
                raise ValidationError({"status": [f"one of {', '.join(JobRun.Status.values)}"]})
            runs = runs.filter(status=params["status"])
        limit = _bounded_int(params, "limit", RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX)
        return Response(JobRunSerializer(runs[:limit], many=True).data)


class JobRunDetailView(TenantAPIView):
    @extend_schema(responses=JobRunDetailSerializer)
    def get(self, request: Request, slug: str, run_id: str) -> Response:
        run = JobRun.objects.for_tenant(self.tenant).select_related("app").filter(run_id=run_id).first()
        if run is None:
            raise NotFound("no such run")
        return Response(JobRunDetailSerializer(run).data)


def manifest_schema(request) -> JsonResponse:
    """The JSON Schema of app.json, for editors."""
    return JsonResponse(MANIFEST_SCHEMA, json_dumps_params={"indent": 2})


class SecretListView(TenantAPIView):
    @extend_schema(
        responses=SecretSerializer(many=True),
        description="The tenant's secrets: names, when each was set, the apps declaring it; never a value.",
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(SecretSerializer(secrets.listing(self.tenant), many=True).data)


class SecretView(TenantAPIView):
    @extend_schema(request=SecretValueSerializer, responses=SecretSerializer)
    def put(self, request: Request, slug: str, name: str) -> Response:
        serializer = SecretValueSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            secret = secrets.set_secret(self.tenant, name, serializer.validated_data["value"])
        except secrets.SecretInvalid as err:
            raise ValidationError({"value": [str(err)]}) from err
        row = next(row for row in secrets.listing(self.tenant) if row["name"] == secret.name)
        return Response(SecretSerializer(row).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, slug: str, name: str) -> Response:
        if not secrets.delete_secret(self.tenant, name):
            raise NotFound("no such secret")
        return Response(status=status.HTTP_204_NO_CONTENT)


class ServiceAccountListView(TenantAPIView):
    @extend_schema(
        responses=ServiceAccountSerializer(many=True),
        description="The tenant's service accounts, one per provider its apps declare: who connected each "
        "and when; never a token. Only jobs and agents running as service carry them.",
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(ServiceAccountSerializer(connections.service_accounts(self.tenant), many=True).data)


class ServiceAccountConnectView(TenantAPIView):
    @extend_schema(
        request=None,
        responses={201: ServiceAccountStartSerializer},
        description="Begin connecting the provider's service account (authorization code + PKCE): open "
        "authorize_url in a browser signed in to the console as yourself; the provider's answer comes back "
        "to the console's Connected accounts page, which keeps the tokens sealed.",
    )
    def post(self, request: Request, slug: str, provider: str) -> Response:
        prov = connections.provider(provider)
        if prov is None or provider not in connections.declared_providers(self.tenant):
            raise NotFound("no app of this tenant declares a connection to that configured provider")
        callback = request.build_absolute_uri(reverse("console:accounts-callback", kwargs={"slug": slug}))
        url = connections.begin_service(self.tenant, prov, request.user.pk, callback)
        body = {"authorize_url": url, "expires_in": connections.SERVICE_STATE_TTL_S}
        return Response(ServiceAccountStartSerializer(body).data, status=status.HTTP_201_CREATED)


class ServiceAccountView(TenantAPIView):
    @extend_schema(request=None, responses={204: None}, description="Revoke the provider's service account.")
    def delete(self, request: Request, slug: str, provider: str) -> Response:
        if not connections.revoke_service(self.tenant, provider):
            raise NotFound("no service account at that provider")
        return Response(status=status.HTTP_204_NO_CONTENT)


OUTBOUND_PAGE_MAX = 500


class OutboundAuditView(TenantAPIView):
    @extend_schema(
        responses=OutboundRequestSerializer(many=True),
        parameters=[
            OpenApiParameter("app", str, description="only this app's requests"),
            OpenApiParameter("outcome", str, enum=["ok", "refused"]),
            OpenApiParameter(
                "limit", int, description=f"1 to {OUTBOUND_PAGE_MAX}, default {RUNS_PAGE_DEFAULT}"
            ),
        ],
        description="Handlers' outbound requests, made or refused, newest first (never bodies or headers).",
    )
    def get(self, request: Request, slug: str) -> Response:
        rows = (
            OutboundRequest.objects.for_tenant(self.tenant)
            .select_related("app")
            .order_by("-created_at", "-id")
        )
        params = request.query_params
        if _text_param(params, "app"):
            rows = rows.filter(app__name=params["app"])
        if _text_param(params, "outcome"):
            rows = rows.filter(outcome=params["outcome"])
        try:
            limit = int(params.get("limit", RUNS_PAGE_DEFAULT))
        except ValueError as err:
            raise ValidationError({"limit": ["an integer"]}) from err
        if not 1 <= limit <= OUTBOUND_PAGE_MAX:
            raise ValidationError({"limit": [f"from 1 to {OUTBOUND_PAGE_MAX}"]})
        return Response(OutboundRequestSerializer(rows[:limit], many=True).data)
