"""test_image_content: Tests image content response."""

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def handle(request):
    return {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}
