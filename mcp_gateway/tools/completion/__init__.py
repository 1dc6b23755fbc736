"""completion/complete for prompt arguments and resource-template variables."""
