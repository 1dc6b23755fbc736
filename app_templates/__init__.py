"""App templates: the files of a new app, from a template, an app name and (crud) its fields.

One source for ``lcp init`` and the console's "New app". Framework-free (the standard library
only, enforced by ``lint-imports``): the ``lcp`` command imports it without Django or the platform.
"""

from app_templates.exceptions import TemplateError
from app_templates.fields import DEFAULT_FIELDS, FIELD_TYPES, Field, check_fields, parse_field
from app_templates.render import DESCRIPTIONS, TEMPLATES, app_name_problem, render

__all__ = [
    "DEFAULT_FIELDS",
    "DESCRIPTIONS",
    "FIELD_TYPES",
    "TEMPLATES",
    "Field",
    "TemplateError",
    "app_name_problem",
    "check_fields",
    "parse_field",
    "render",
]
