"""POST /items: a new item, not done yet."""


def handle(request):
    data = {"title": request.body["title"], "done": False}
    if request.body.get("notes"):
        data["notes"] = request.body["notes"]
    record = request.records.create("items", data)
    return {"id": record["id"], **record["data"]}, 201
