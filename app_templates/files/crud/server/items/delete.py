"""DELETE /items/{item_id}: remove an item."""

from platform_sdk import NotFound


def handle(request):
    try:
        request.records.delete("items", request.params["item_id"])
    except NotFound:
        return {"error": "no such item: list_items gives the ids"}, 404
    return {"deleted": request.params["item_id"]}
