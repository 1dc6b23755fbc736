"""GET /template/{id}/data: the resource template of the conformance suite (test://template/{id}/data)."""


def handle(request):
    item = request.params["id"]
    return {"id": item, "templateTest": True, "data": f"Data for ID: {item}"}
