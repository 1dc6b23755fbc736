from __future__ import annotations

from rest_framework import serializers

from apps_runtime.models import App, AppVersion, HandlerError, Tool


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
