"""test_logging_tool: Logs one line at info level (shown only to clients that set a log level)."""


def handle(request):
    request.log("info", "A log line from test_logging_tool")
    return {"content": [{"type": "text", "text": "Logged one line."}]}
