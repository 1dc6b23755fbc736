"""test_prompt_with_embedded_resource: the resource named by the resourceUri argument, embedded."""


def handle(request):
    resource = {
        "uri": request.query["resourceUri"],
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return {
        "messages": [
            {"role": "user", "content": {"type": "resource", "resource": resource}},
            {
                "role": "user",
                "content": {"type": "text", "text": "Please process the embedded resource above."},
            },  # noqa: E501
        ]
    }
