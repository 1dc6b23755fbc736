"""test_simple_text: Tests simple text content response."""


def handle(request):
    return {"content": [{"type": "text", "text": "This is a simple text response for testing."}]}
