"""Completion of arg1 of test_prompt_with_arguments: the suggestions that start with what was typed."""

WORDS = ("paris", "park", "party")


def handle(request):
    typed = request.query.get("value", "")
    return [word for word in WORDS if word.startswith(typed)]
