"""The deploy API's JSON parser: a body too deep to parse is a deploy problem, not a server error."""

from __future__ import annotations

from rest_framework.parsers import JSONParser

from apps_runtime.manifest import DeployRejected, Problem
from apps_runtime.manifest.bundle import nested_too_deep


class DeployJSONParser(JSONParser):
    """DRF's JSON parser; Python's parser gives up past ~1,000 levels with RecursionError, which this
    answers as the 422 of a manifest nested too deep (the validator's limit is far lower)."""

    def parse(self, stream, media_type=None, parser_context=None):
        """Raises: DeployRejected: the body is nested too deep to parse."""
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise DeployRejected([Problem("/", nested_too_deep("the request body"))]) from None
