"""The OpenAPI 3.1 description of /api/, written by hand: five reads and their answers."""

from typing import Any

from books.library_api import (
    BOOK_HIGHLIGHTS_MAX_LIMIT,
    CONNECTIONS_MAX_LIMIT,
    OFFSET_MAX,
    SEARCH_MAX_LIMIT,
)

_HIGHLIGHT = {
    "type": "object",
    "required": ["code", "text", "book", "author", "location"],
    "properties": {
        "code": {"type": "string", "format": "uuid"},
        "kind": {"type": "string", "enum": ["highlight", "note"]},
        "text": {"type": "string"},
        "note": {"type": "string", "description": "The reader's note on it."},
        "book": {"type": "string", "description": "The book's title."},
        "book_code": {"type": "string", "format": "uuid"},
        "author": {"type": "string"},
        "location": {"type": "string", "description": "For a citation: 'Location 120-124'."},
        "chapter": {"type": "string"},
        "page": {"type": "string"},
        "location_start": {"type": ["integer", "null"]},
        "location_end": {"type": ["integer", "null"]},
        "added_at": {"type": ["string", "null"], "format": "date-time"},
        "favourite": {"type": "boolean"},
        "url": {"type": "string", "description": "The highlight's page in Exogram."},
    },
}
_CONNECTED = {
    "allOf": [
        {"$ref": "#/components/schemas/Highlight"},
        {
            "type": "object",
            "properties": {
                "strength": {"type": "string", "enum": ["same idea", "related", "nearest"]},
                "likely_related_percent": {
                    "type": ["integer", "null"],
                    "minimum": 0,
                    "maximum": 100,
                    "description": (
                        "How likely the pair judge thinks a reader would call the two "
                        "related, as the highlight's page shows it ('73% likely related'); "
                        "null for a pair it never judged."
                    ),
                },
                "same_author": {"type": "boolean"},
            },
        },
    ]
}
# The highlight's state and the nearest passages its page shows (books.library_api).
_CONNECTIONS_STATE = {
    "state": {
        "type": "string",
        "enum": ["waiting", "read", "word"],
        "description": (
            "waiting: not ready for connections yet; read: ready, its connections (or the "
            "nearest passages) are here; word: a word, a short phrase, a heading or a short "
            "note, never connected. The values stay as they were named first."
        ),
    },
    "state_said": {
        "type": "string",
        "description": "The state in words, in English, as the highlight's page says it.",
    },
    "nearest": {
        "type": "array",
        "items": {
            "allOf": [
                _CONNECTED,
                {"type": "object", "properties": {"connection": {"const": False}}},
            ]
        },
        "description": (
            "With no connection from another author: the passages of the reader's other "
            "books the highlight page shows as 'Nearest in your library', the judge's best "
            "candidates with its percentage. Never connections (`connection` false)."
        ),
    },
    "connection_percent": {
        "type": ["integer", "null"],
        "description": "The percentage a pair needs to be a connection, when `nearest` "
        "was judged; none of them reached it.",
    },
}
_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _query(
    name: str, schema: dict[str, Any], description: str, *, required: bool = False
) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
        "description": description,
    }


def _offset() -> dict[str, Any]:
    return _query(
        "offset",
        {"type": "integer", "minimum": 0, "maximum": OFFSET_MAX, "default": 0},
        "Skip this many (the previous answer's `next_offset`).",
    )


_PAGE = {
    "offset": {"type": "integer"},
    "limit": {"type": "integer"},
    "next_offset": {
        "type": ["integer", "null"],
        "description": "The offset of the next page; null on the last.",
    },
}


def _path(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string", "format": "uuid"},
    }


_ERRORS = {
    "400": _json(_ref("Error"), "An argument out of range"),
    "401": _json(_ref("Error"), "No token, or a token that is unknown or revoked"),
}
_NOT_FOUND = {"404": _json(_ref("Error"), "Not in this reader's library")}


def openapi_schema(*, server_url: str) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Exogram",
            "version": "1",
            "description": (
                "Read-only access to one reader's highlights, with a citation (book, author, "
                "location) on every highlight. Authenticate with a token made in Settings → "
                "API tokens: `Authorization: Bearer exo_…`."
            ),
        },
        "servers": [{"url": server_url}],
        "security": [{"token": []}],
        "paths": {
            "/search/": {
                "get": {
                    "operationId": "search_highlights",
                    "summary": "Search highlights by words and meaning, best first",
                    "parameters": [
                        _query("q", {"type": "string"}, "Words or a question.", required=True),
                        _query(
                            "mode",
                            {
                                "type": "string",
                                "enum": ["auto", "keyword", "meaning"],
                                "default": "auto",
                            },
                            "How to match.",
                        ),
                        _query(
                            "limit",
                            {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": SEARCH_MAX_LIMIT,
                                "default": 10,
                            },
                            "Results.",
                        ),
                        _offset(),
                        _query("book", {"type": "string", "format": "uuid"}, "Only this book."),
                    ],
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "query": {"type": "string"},
                                    "mode": {"type": "string"},
                                    "mode_used": {
                                        "type": "string",
                                        "enum": ["hybrid", "keyword", "meaning", ""],
                                    },
                                    "notice": {"type": "string"},
                                    "total": {
                                        "type": "integer",
                                        "description": (
                                            "Results there are pages of. With `total_capped`, "
                                            "more highlights match than were ranked and this "
                                            "is a floor: narrow the query to reach them."
                                        ),
                                    },
                                    "total_capped": {
                                        "type": "boolean",
                                        "description": (
                                            "A search ranks the first few hundred highlights "
                                            "its words find and the closest by meaning: true "
                                            "when more match than that."
                                        ),
                                    },
                                    **_PAGE,
                                    "results": {"type": "array", "items": _ref("Highlight")},
                                },
                            }
                        ),
                        **_ERRORS,
                        **_NOT_FOUND,
                    },
                }
            },
            "/highlights/{code}/": {
                "get": {
                    "operationId": "get_highlight",
                    "summary": "One highlight with its note, tags and connections",
                    "parameters": [_path("code")],
                    "responses": {
                        "200": _json(
                            {
                                "allOf": [
                                    _ref("Highlight"),
                                    {
                                        "type": "object",
                                        "properties": {
                                            "tags": {"type": "array", "items": {"type": "string"}},
                                            "connections": {
                                                "type": "array",
                                                "items": _ref("ConnectedHighlight"),
                                            },
                                            **_CONNECTIONS_STATE,
                                        },
                                    },
                                ]
                            }
                        ),
                        **_ERRORS,
                        **_NOT_FOUND,
                    },
                }
            },
            "/highlights/{code}/connections/": {
                "get": {
                    "operationId": "find_connections",
                    "summary": "Highlights from the reader's other books with the same idea",
                    "parameters": [
                        _path("code"),
                        _query(
                            "limit",
                            {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": CONNECTIONS_MAX_LIMIT,
                                "default": 10,
                            },
                            "At most.",
                        ),
                    ],
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "highlight": _ref("Highlight"),
                                    "connections": {
                                        "type": "array",
                                        "items": _ref("ConnectedHighlight"),
                                    },
                                    **_CONNECTIONS_STATE,
                                },
                            }
                        ),
                        **_ERRORS,
                        **_NOT_FOUND,
                    },
                }
            },
            "/books/": {
                "get": {
                    "operationId": "list_books",
                    "summary": "The reader's books, by title",
                    "parameters": [_query("q", {"type": "string"}, "Words of a title or author.")],
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "query": {"type": "string"},
                                    "books": {"type": "array", "items": _ref("Book")},
                                },
                            }
                        ),
                        **_ERRORS,
                    },
                }
            },
            "/books/{code}/highlights/": {
                "get": {
                    "operationId": "book_highlights",
                    "summary": "A book's highlights in reading order, a page at a time",
                    "parameters": [
                        _path("code"),
                        _offset(),
                        _query(
                            "limit",
                            {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": BOOK_HIGHLIGHTS_MAX_LIMIT,
                                "default": 50,
                            },
                            "At most.",
                        ),
                    ],
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "book": {"type": "object"},
                                    "total": {"type": "integer"},
                                    **_PAGE,
                                    "highlights": {"type": "array", "items": _ref("Highlight")},
                                },
                            }
                        ),
                        **_ERRORS,
                        **_NOT_FOUND,
                    },
                }
            },
        },
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Highlight": _HIGHLIGHT,
                "ConnectedHighlight": _CONNECTED,
                "Book": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string", "format": "uuid"},
                        "title": {"type": "string"},
                        "author": {"type": "string"},
                        "highlights": {"type": "integer"},
                        "last_added_at": {"type": ["string", "null"], "format": "date-time"},
                        "url": {"type": "string"},
                    },
                },
                "Error": _ERROR,
            },
        },
    }
