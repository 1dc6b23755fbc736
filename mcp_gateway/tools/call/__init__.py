"""tools/list and tools/call for one caller: calls, confirmation, task modes, code mode, preview."""
