"""protocol_error_job: a result the platform does not keep for a task.

A handler's own failures are tool errors on this platform (``isError``), so the fixture gets a
protocol-level failure of the task the one way a tool can cause it: a result over the bytes a task
keeps (the suite's platform runs with TASK_MAX_RESULT_BYTES at 64 KiB, see ``suite.py``).
"""


def handle(request):
    return {"content": [{"type": "text", "text": "x" * 100_000}]}
