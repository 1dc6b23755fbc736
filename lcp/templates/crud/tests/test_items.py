"""Run with `lcp test`: each test gets the app freshly deployed (the platform's own validation) into a
scratch tenant, and calls its tools as a member, in the platform's handler runtime."""


def test_an_added_item_can_be_read_changed_and_removed(app):
    created = app.call_tool("create_item", {"title": "Call the plumber"}, user="ada")
    assert not created.is_error, created.text
    item_id = created.data["id"]

    assert app.call_tool("get_item", {"item_id": item_id}, user="ada").data["title"] == "Call the plumber"
    assert app.call_tool("update_item", {"item_id": item_id, "done": True}, user="ada").data["done"] is True
    assert app.call_tool("list_items", {"open_only": True}, user="ada").data["items"] == []

    # delete_item asks the user first ("confirm": true): confirm=True is the user's yes.
    assert not app.call_tool("delete_item", {"item_id": item_id}, user="ada", confirm=True).is_error
    missing = app.call_tool("get_item", {"item_id": item_id}, user="ada")
    assert missing.is_error and "no such item" in missing.text


def test_a_title_is_required(app):
    refused = app.call_tool("create_item", {}, user="ada")
    assert refused.is_error and "title" in refused.text
