"""test_audio_content: Tests audio content response."""

WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


def handle(request):
    return {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}
