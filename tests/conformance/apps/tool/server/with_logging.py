"""test_tool_with_logging: Tests tool that emits log messages during execution."""

import time


def handle(request):
    for index, line in enumerate(
        ("Tool execution started", "Tool processing data", "Tool execution completed")
    ):
        if index:
            time.sleep(0.05)
        request.log("info", line)
    return {"content": [{"type": "text", "text": "Tool with logging executed successfully"}]}
