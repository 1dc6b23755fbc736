"""GET /items: the items, newest first; ``open_only`` leaves out those done."""


def handle(request):
    limit = int(request.query.get("limit", 50))
    where = {"done": False} if request.query.get("open_only") else None
    page = request.records.query("items", where=where, order_by="-created_at", limit=limit)
    return {"items": [{"id": r["id"], **r["data"]} for r in page["items"]]}
