"""test_tool_with_progress: Tests tool that reports progress notifications."""

import time


def handle(request):
    for step in (0, 50, 100):
        if step:
            time.sleep(0.05)
        request.progress(step, 100, f"Completed step {step} of 100")
    return {"content": [{"type": "text", "text": "Progress reported: 0, 50 and 100 of 100."}]}
