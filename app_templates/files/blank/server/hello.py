"""GET /hello: a greeting for the name given."""


def handle(request):
    return {"greeting": f"Hello, {request.query['name']}!"}
