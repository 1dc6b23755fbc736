"""Where a JSON pointer's value starts in a JSON text, so the editor shows a problem at its line.

The validator answers with pointers (``/mcp/tools/0/name``); an admin edits text. This reads the
text once (a small recursive-descent scan, no evaluation) and maps every pointer to its line. A
pointer the text lacks (a missing required key) is shown at its nearest existing parent's line.
"""

from __future__ import annotations

_WHITESPACE = " \t\r\n"


class _Scan:
    def __init__(self, text: str) -> None:
        self.text, self.at, self.lines = text, 0, {}

    def line(self) -> int:
        return self.text.count("\n", 0, self.at) + 1

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in _WHITESPACE:
            self.at += 1

    def value(self, pointer: str, depth: int) -> None:
        self.skip()
        self.lines[pointer] = self.line()
        if depth > 64 or self.at >= len(self.text):
            raise ValueError("too deep or cut short")
        head = self.text[self.at]
        if head == "{":
            self.container("}", pointer, depth, keyed=True)
        elif head == "[":
            self.container("]", pointer, depth, keyed=False)
        elif head == '"':
            self.string()
        else:
            while self.at < len(self.text) and self.text[self.at] not in ",]}" + _WHITESPACE:
                self.at += 1

    def container(self, close: str, pointer: str, depth: int, *, keyed: bool) -> None:
        self.at += 1
        index = 0
        while True:
            self.skip()
            if self.at >= len(self.text):
                raise ValueError("cut short")
            if self.text[self.at] == close:
                self.at += 1
                return
            if self.text[self.at] == ",":
                self.at += 1
                continue
            if keyed:
                key = self.string()
                self.skip()
                self.at += 1  # the colon
                token = key.replace("~", "~0").replace("/", "~1")
            else:
                token = str(index)
                index += 1
            self.value(f"{pointer}/{token}", depth + 1)

    def string(self) -> str:
        start = self.at + 1
        self.at = start
        while self.at < len(self.text) and self.text[self.at] != '"':
            self.at += 2 if self.text[self.at] == "\\" else 1
        raw = self.text[start : self.at]
        self.at += 1
        return raw.encode("utf-8").decode("unicode_escape") if "\\" in raw else raw


def pointer_lines(text: str) -> dict[str, int]:
    """Each pointer of ``text`` (``""`` for the root) -> its 1-based line; what was read of a broken text."""
    scan = _Scan(text)
    try:
        scan.value("", 0)
    except (ValueError, UnicodeDecodeError):
        pass
    return scan.lines


def line_of(pointer: str, lines: dict[str, int]) -> int:
    """The line of ``pointer``, else of its nearest parent the text has (1 for the root)."""
    path = "" if pointer in ("", "/") else pointer
    while path not in lines and path:
        path = path.rsplit("/", 1)[0]
    return lines.get(path, 1)
