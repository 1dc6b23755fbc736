"""GET /items/{item_id}: one item."""

from platform_sdk import NotFound


def handle(request):
    try:
        record = request.records.get("items", request.params["item_id"])
    except NotFound:
        return {"error": "no such item: list_items gives the ids"}, 404
    return {"id": record["id"], **record["data"]}
