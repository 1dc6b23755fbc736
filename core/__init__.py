"""Platform-wide rules every package may use: error ids, the problem body, setting bounds.

The bottom of the package order (``console | lowcode_platform -> mcp_gateway -> oauth ->
apps_runtime -> tenants -> core``, enforced by ``lint-imports``): it imports the standard library,
Django, Celery (``background``: sending work) and small libraries (python-ulid, cachetools) only,
never another package of the platform.
"""
