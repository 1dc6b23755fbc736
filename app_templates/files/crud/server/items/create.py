"""POST /items: a new item from the fields given; a done flag starts false."""

FIELDS = __FIELDS__  # the fields create_item takes
STARTS_FALSE = __STARTS_FALSE__


def handle(request):
    data = {key: request.body[key] for key in FIELDS if key in request.body}
    data.update(dict.fromkeys(STARTS_FALSE, False))
    record = request.records.create("items", data)
    return {"id": record["id"], **record["data"]}, 201
