"""GET /items: the items, newest first; ``open_only`` leaves out those done."""

FLAG = __FLAG__  # the yes/no field open_only filters on, or None


def handle(request):
    limit = int(request.query.get("limit", 50))
    where = {FLAG: False} if FLAG and request.query.get("open_only") else None
    page = request.records.query("items", where=where, order_by="-created_at", limit=limit)
    return {"items": [{"id": r["id"], **r["data"]} for r in page["items"]]}
