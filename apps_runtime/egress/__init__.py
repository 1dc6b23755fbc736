"""Outbound HTTP made by the platform for a handler: egress rules, addresses, secrets, connections.

docs/egress.md is the reference; ``client.send`` is the one path an outbound request takes.
"""
