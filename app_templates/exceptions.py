"""The one error of the templates: what was asked cannot make an app, and why."""

from __future__ import annotations


class TemplateError(ValueError):
    """A template, app name or field the generator refuses; ``problems`` says each, one a line."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))
