"""Run with `lcp test`: each test gets the app freshly deployed (the platform's own validation) into a
scratch tenant, and calls its tools as a member, in the platform's handler runtime."""

SAMPLE = __SAMPLE__  # an item as create_item takes it
CHANGE = __CHANGE__  # one change update_item makes
REQUIRED = __REQUIRED__
FLAG = __FLAG__  # the yes/no field list_items' open_only filters on, or None


def test_an_added_item_can_be_read_changed_and_removed(app):
    created = app.call_tool("create_item", SAMPLE, user="ada")
    assert not created.is_error, created.text
    item_id = created.data["id"]

    read = app.call_tool("get_item", {"item_id": item_id}, user="ada").data
    assert {key: read[key] for key in SAMPLE} == SAMPLE
    changed = app.call_tool("update_item", {"item_id": item_id, **CHANGE}, user="ada").data
    assert {key: changed[key] for key in CHANGE} == CHANGE
    listed = app.call_tool("list_items", {"open_only": True} if FLAG else {}, user="ada").data["items"]
    assert [item["id"] for item in listed] == ([] if FLAG else [item_id])

    # delete_item asks the user first ("confirm": true): confirm=True is the user's yes.
    assert not app.call_tool("delete_item", {"item_id": item_id}, user="ada", confirm=True).is_error
    missing = app.call_tool("get_item", {"item_id": item_id}, user="ada")
    assert missing.is_error and "no such item" in missing.text


def test_required_fields_are_required(app):
    for name in REQUIRED:
        without = {key: value for key, value in SAMPLE.items() if key != name}
        refused = app.call_tool("create_item", without, user="ada")
        assert refused.is_error and name in refused.text
