from __future__ import annotations

from rest_framework import serializers

from apps_runtime.models import App, AppVersion, HandlerError, JobRun, OutboundRequest, Tool


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
            "bytes_sent",
            "bytes_received",
            "duration_ms",
        ]
