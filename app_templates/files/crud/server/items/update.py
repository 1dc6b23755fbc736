"""PATCH /items/{item_id}: change the fields given, keep the others."""

from platform_sdk import NotFound

FIELDS = __ALL_FIELDS__


def handle(request):
    changes = {key: request.body[key] for key in FIELDS if key in request.body}
    if not changes:
        return {"error": "give at least one of " + ", ".join(FIELDS)}, 400
    try:
        record = request.records.update("items", request.params["item_id"], changes)
    except NotFound:
        return {"error": "no such item: list_items gives the ids"}, 404
    return {"id": record["id"], **record["data"]}
