"""failing_job: the tool's own error (a 4xx answer is a tool error, ``isError``) after about 1 s."""

import time


def handle(request):
    time.sleep(1)
    return {"error": "The job failed, as it always does"}, 422
