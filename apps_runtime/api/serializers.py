from __future__ import annotations

from datetime import datetime

from rest_framework import serializers

from apps_runtime.models import App, AppVersion, CallLog, HandlerError, JobRun, OutboundRequest, Tool


class ToolSerializer(serializers.ModelSerializer):
    class Meta:
        model = Tool
        fields = ["name", "wire_name", "route_key", "descriptor"]


class AppVersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = AppVersion
        fields = ["number", "content_hash", "warnings", "created_at"]


class AppSerializer(serializers.ModelSerializer):
    active_version = serializers.IntegerField(source="active_version.number", allow_null=True, default=None)
    tools = serializers.SerializerMethodField()

    class Meta:
        model = App
        fields = ["name", "active_version", "updated_at", "tools"]

    def get_tools(self, app: App) -> list[dict]:
        return ToolSerializer(app.active_tools, many=True).data


class DeployJsonSerializer(serializers.Serializer):
    """A bundle posted as JSON: the manifest and the files (path -> text)."""

    manifest = serializers.JSONField()
    files = serializers.DictField(child=serializers.CharField(allow_blank=True, trim_whitespace=False))


class HandlerErrorSerializer(serializers.ModelSerializer):
    app = serializers.CharField(source="app.name", default=None)

    class Meta:
        model = HandlerError
        fields = [
            "error_id",
            "kind",
            "app",
            "version_number",
            "route_key",
            "caller",
            "trace",
            "logs",
            "created_at",
        ]


class HandlerErrorListSerializer(serializers.Serializer):
    """A page of handler errors, oldest first, and the cursor to ask for newer ones."""

    errors = HandlerErrorSerializer(many=True)
    cursor = serializers.CharField()


class CallLogSerializer(serializers.ModelSerializer):
    app = serializers.CharField(source="app.name")

    class Meta:
        model = CallLog
        fields = ["app", "version_number", "route_key", "caller", "status", "logs", "created_at"]


class CallLogListSerializer(serializers.Serializer):
    """A page of successful runs' logs, oldest first, and the cursor to ask for newer ones."""

    logs = CallLogSerializer(many=True)
    cursor = serializers.CharField()


class ValidationSerializer(serializers.Serializer):
    """A deploy's verdict on a bundle, nothing deployed."""

    valid = serializers.BooleanField()
    problems = serializers.ListField(child=serializers.DictField())
    warnings = serializers.ListField(child=serializers.CharField())
    tools = serializers.ListField(child=serializers.DictField())


class JobRunSerializer(serializers.ModelSerializer):
    """A run as tenant admins see it in a list: who it ran as, how it went, the last error id."""

    app = serializers.CharField(source="app.name")
    job = serializers.SerializerMethodField()
    version = serializers.IntegerField(source="version_number")
    route = serializers.CharField(source="route_key")
    caller = serializers.SerializerMethodField()
    error_id = serializers.SerializerMethodField()
    error_code = serializers.SerializerMethodField()

    class Meta:
        model = JobRun
        fields = [
            "run_id",
            "app",
            "version",
            "job",
            "route",
            "caller",
            "status",
            "attempts",
            "scheduled_for",
            "enqueued_at",
            "started_at",
            "finished_at",
            "duration_ms",
            "result_status",
            "error_id",
            "error_code",
        ]

    def get_job(self, run: JobRun) -> str | None:
        return run.job or None

    def get_caller(self, run: JobRun) -> dict:
        snapshot = run.caller or {}
        return {
            "username": snapshot.get("username"),
            "roles": snapshot.get("roles") or [],
            "superuser": bool(snapshot.get("is_superuser")),
            "service": bool(snapshot.get("is_service")),
        }

    def get_error_id(self, run: JobRun) -> str | None:
        return run.error_id or None

    def get_error_code(self, run: JobRun) -> str | None:
        return run.error_code or None


class JobRunDetailSerializer(JobRunSerializer):
    """One run with its body and every attempt."""

    class Meta(JobRunSerializer.Meta):
        fields = [*JobRunSerializer.Meta.fields, "due_at", "body", "attempt_log"]


class SecretValueSerializer(serializers.Serializer):
    value = serializers.CharField(max_length=8192, trim_whitespace=False)


class SecretSerializer(serializers.Serializer):
    """A secret as admins see it: never its value."""

    name = serializers.CharField()
    updated_at = serializers.DateTimeField()
    apps = serializers.ListField(
        child=serializers.CharField(), help_text="apps whose active version declares it"
    )


class ServiceAccountSerializer(serializers.Serializer):
    """A provider's service account as admins see it: who connected it and when; never a token."""

    provider = serializers.CharField()
    apps = serializers.ListField(
        child=serializers.CharField(), help_text="apps whose active version declares a connection to it"
    )
    configured = serializers.BooleanField(help_text="the operator lists the provider")
    connected = serializers.SerializerMethodField()
    connected_by = serializers.SerializerMethodField()
    connected_at = serializers.SerializerMethodField()
    updated_at = serializers.SerializerMethodField()
    expires_at = serializers.SerializerMethodField()
    scopes = serializers.SerializerMethodField()

    def get_connected(self, entry: dict) -> bool:
        return entry["account"] is not None

    def get_connected_by(self, entry: dict) -> str | None:
        account = entry["account"]
        return account.connected_by.get_username() if account and account.connected_by else None

    def get_connected_at(self, entry: dict) -> datetime | None:
        return entry["account"].connected_at if entry["account"] else None

    def get_updated_at(self, entry: dict) -> datetime | None:
        return entry["account"].updated_at if entry["account"] else None

    def get_expires_at(self, entry: dict) -> datetime | None:
        return entry["account"].expires_at if entry["account"] else None

    def get_scopes(self, entry: dict) -> list[str]:
        return list(entry["account"].scopes) if entry["account"] else []


class ServiceAccountStartSerializer(serializers.Serializer):
    authorize_url = serializers.CharField(
        help_text="open it in a browser signed in to the console as yourself, and sign in at the provider"
    )
    expires_in = serializers.IntegerField(help_text="seconds left to finish")


class OutboundRequestSerializer(serializers.ModelSerializer):
    app = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = OutboundRequest
        fields = [
            "created_at",
            "app",
            "route_key",
            "caller",
            "trace_id",
            "method",
            "scheme",
            "host",
            "port",
            "path",
            "status",
            "outcome",
            "refusal",
            "connection",
            "account",
            "bytes_sent",
            "bytes_received",
            "duration_ms",
        ]
