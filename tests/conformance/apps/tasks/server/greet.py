"""greet: a sync-only tool (no task)."""


def handle(request):
    return {"content": [{"type": "text", "text": f"Hello, {request.body.get('name', 'World')}!"}]}
