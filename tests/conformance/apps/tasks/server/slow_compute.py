"""slow_compute: sleeps ``seconds`` then answers; its route stops at 5 s (see app.json)."""

import time


def handle(request):
    seconds = request.body.get("seconds", 0)
    time.sleep(seconds)
    label = request.body.get("label", "")
    return {"content": [{"type": "text", "text": f"Computed {label} in {seconds} s"}]}
