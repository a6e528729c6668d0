"""Request bodies of the league's pages and API: read under a byte cap, then parsed strictly.

A body is read whole into memory, but never more than its route's limit (:func:`read_body`: an
announced ``Content-Length`` past the limit is refused before a byte is read, and the bytes that
come are counted as they come; the one web app's :class:`arena.web.server.Guard` has already cut
off a body past the same limit or slower than its time limit).  Only then is it parsed: JSON, an
urlencoded form (each field at most once, as in a multipart form), or a ``multipart/form-data`` form (the
submit page's file).

A multipart form is parsed by python-multipart (the parser of Starlette's own forms) under this
module's limits: only the field names the route expects, each at most once (so a form has at most
as many parts as the route has fields, and one padded with thousands is refused at the first
extra), at most :data:`MAX_PART_HEADERS` headers of at most :data:`MAX_HEADER_BYTES` each in a
part, a file only where a file is expected, text fields of at most their byte limit and UTF-8, and
a body that ends with its closing boundary.  A file's name is kept only as its last path component (a
browser's ``../../x.py`` or ``C:\\x.py`` is ``x.py``) and the league never uses it as a path: it
tells only what kind of file was sent.  Each refusal is one line naming the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import python_multipart
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header
from starlette.requests import Request

from arena.league.db import LeagueError

#: The most headers a part of a multipart form may have, and bytes in one of them.
MAX_PART_HEADERS = 4
MAX_HEADER_BYTES = 2048
#: The most fields an urlencoded form may have.
MAX_FORM_FIELDS = 20


#: A whole number as a request may send it: ASCII digits only (``str.isdigit`` also passes ``²``, which
#: ``int`` refuses, and Arabic-Indic or full-width digits, which it reads).
DECIMAL_RE = re.compile(r"[0-9]+")


def decimal(text: str, most_digits: int) -> int | None:
    """``text`` as a whole number of at most ``most_digits`` ASCII digits; None if it is not one."""
    if len(text) > most_digits or not DECIMAL_RE.fullmatch(text):
        return None
    return int(text)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 past ``limit`` bytes (announced or not)."""
    length = request.headers.get("content-length")
    if length is not None:
        if decimal(length, 18) is None:
            raise LeagueError("bad Content-Length header")
        if int(length) > limit:
            raise LeagueError(f"the request body is over the {limit}-byte limit", 413)
    buf = bytearray()
    async for chunk in request.stream():
        buf += chunk
        if len(buf) > limit:
            raise LeagueError(f"the request body is over the {limit}-byte limit", 413)
    return bytes(buf)


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    body = await read_body(request, limit)
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise LeagueError("the body is not valid JSON") from None
    except (RecursionError, MemoryError):  # [[[[... thousands deep: the parser's limit, not the server's fault
        raise LeagueError("the body's JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise LeagueError("the body must be a JSON object")
    return data


def _content_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def read_form(request: Request, limit: int) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` form (each field once)."""
    if _content_type(request) != "application/x-www-form-urlencoded":
        raise LeagueError("send the form as application/x-www-form-urlencoded", 415)
    return _urlencoded(await read_body(request, limit))


def _urlencoded(body: bytes) -> dict[str, str]:
    try:
        fields = parse_qs(
            body.decode("ascii"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=MAX_FORM_FIELDS,
            errors="strict",
        )
    except (UnicodeDecodeError, ValueError):
        raise LeagueError("the form is garbled") from None
    for key, values in fields.items():  # as a multipart form's: which of two values was meant is not ours to guess
        if len(values) > 1:
            raise LeagueError(f"the form sends its field {key[:40]!r} twice")
    return {k: v[0] for k, v in fields.items()}


@dataclass(frozen=True)
class FilePart:
    """A file sent in a multipart form: its name's last component (never a path to use) and its bytes."""

    filename: str
    data: bytes


async def read_file_form(
    request: Request, limit: int, *, text: Mapping[str, int], files: frozenset[str]
) -> tuple[dict[str, str], dict[str, FilePart]]:
    """A form that may carry files: ``multipart/form-data`` (what a page with a file input sends), or an
    urlencoded form (text fields only).  ``text``: the text fields' names and byte limits; ``files``: the
    file fields' names.  A file input left empty (no name, no bytes) counts as not sent."""
    ctype = _content_type(request)
    if ctype == "application/x-www-form-urlencoded":
        fields = _urlencoded(await read_body(request, limit))
        for key, value in fields.items():
            if key not in text:
                raise LeagueError(f"the form has no field {key[:40]!r}")
            if len(value.encode("utf-8", "surrogatepass")) > text[key]:
                raise LeagueError(f"the form's field {key!r} is over its {text[key]}-byte limit", 413)
        return fields, {}
    if ctype != "multipart/form-data":
        raise LeagueError("send the form as multipart/form-data (or application/x-www-form-urlencoded)", 415)
    _, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary", b"")
    if not re.fullmatch(rb"[0-9A-Za-z'()+_,\-./:=? ]{1,70}", boundary) or boundary.endswith(b" "):
        raise LeagueError("the multipart form's Content-Type has no valid boundary")
    body = await read_body(request, limit)
    return _Multipart(boundary, text, files).parse(body)


class _Multipart:
    """The callbacks of python-multipart's parser, collecting one form's parts under this module's limits."""

    def __init__(self, boundary: bytes, text: Mapping[str, int], files: frozenset[str]):
        self.boundary, self.text, self.files = boundary, text, files
        self.fields: dict[str, str] = {}
        self.uploads: dict[str, FilePart] = {}
        self.ended = False
        self._new_part()

    def _new_part(self) -> None:
        self.headers: dict[bytes, bytes] = {}
        self.header_name = bytearray()
        self.header_value = bytearray()
        self.name = ""
        self.filename: str | None = None
        self.data = bytearray()

    def on_part_begin(self) -> None:
        self._new_part()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]
        self._header_size()

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]
        self._header_size()

    def _header_size(self) -> None:
        if len(self.header_name) + len(self.header_value) > MAX_HEADER_BYTES:
            raise LeagueError(f"a part of the form has a header over {MAX_HEADER_BYTES} bytes")

    def on_header_end(self) -> None:
        if len(self.headers) >= MAX_PART_HEADERS:
            raise LeagueError(f"a part of the form has more than {MAX_PART_HEADERS} headers")
        self.headers[bytes(self.header_name).strip().lower()] = bytes(self.header_value).strip()
        self.header_name, self.header_value = bytearray(), bytearray()

    def on_headers_finished(self) -> None:
        disposition, options = parse_options_header(self.headers.get(b"content-disposition"))
        if disposition != b"form-data" or b"name" not in options:
            raise LeagueError("a part of the form has no Content-Disposition: form-data with a name")
        name = options[b"name"].decode("latin-1")
        if name not in self.text and name not in self.files:
            raise LeagueError(f"the form has no field {name[:40]!r}")
        if name in self.fields or name in self.uploads:
            raise LeagueError(f"the form sends its field {name!r} twice")
        if (b"filename" in options) != (name in self.files):
            raise LeagueError(f"the form's field {name!r} must be {'a file' if name in self.files else 'text'}")
        self.name = name
        if b"filename" in options:  # as the browser sent it (UTF-8 bytes), its last path component alone
            raw = options[b"filename"].decode("latin-1").encode("latin-1").decode("utf-8", "replace")
            self.filename = re.split(r"[/\\]", raw)[-1].replace("\0", "")[:200]

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        self.data += data[start:end]
        if self.filename is None and len(self.data) > self.text[self.name]:
            raise LeagueError(f"the form's field {self.name!r} is over its {self.text[self.name]}-byte limit", 413)

    def on_part_end(self) -> None:
        if self.filename is None:
            try:
                self.fields[self.name] = self.data.decode("utf-8")
            except UnicodeDecodeError:
                raise LeagueError(f"the form's field {self.name!r} is not UTF-8 text") from None
        elif self.filename or self.data:  # an empty file input sends a nameless, empty file: not a file
            self.uploads[self.name] = FilePart(self.filename, bytes(self.data))

    def on_end(self) -> None:
        self.ended = True

    def parse(self, body: bytes) -> tuple[dict[str, str], dict[str, FilePart]]:
        callbacks: Any = {
            f"on_{event}": getattr(self, f"on_{event}")
            for event in (
                "part_begin",
                "header_field",
                "header_value",
                "header_end",
                "headers_finished",
                "part_data",
                "part_end",
                "end",
            )
        }
        try:
            parser = python_multipart.MultipartParser(self.boundary, callbacks)
            parser.write(body)
            parser.finalize()
        except FormParserError as exc:
            raise LeagueError(f"the multipart form is garbled: {exc}") from None
        if not self.ended:
            raise LeagueError("the multipart form ends before its closing boundary")
        return self.fields, self.uploads
