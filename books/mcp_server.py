"""A Model Context Protocol server over stdio: one reader's library for an AI assistant.

Built on the official SDK's low-level `Server`, so the protocol's two kinds of failure stay
apart as the specification wants: a call the server cannot make sense of (an unknown tool,
arguments that do not fit the tool's schema) is a JSON-RPC error (-32602), while a call
that runs and finds nothing (a code not in this reader's library) is a tool result with
`isError`, which the model reads and can act on.

The tools call books.library_api, the same reads as the HTTP API. The ORM is synchronous:
each call runs in one dedicated thread (asgiref's thread-sensitive executor), never on
the event loop.
"""

import json
import logging
from collections.abc import Callable
from typing import Any, Literal, Protocol

import anyio
import mcp_types as types
from asgiref.sync import sync_to_async
from django.db import DatabaseError, close_old_connections
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from accounts.models import User
from books import library_api
from books.importing.hashtags import HASHTAGS_PER_NOTE
from books.models import NOTE_MAX_LENGTH
from books.search.search import QUERY_MAX_LENGTH
from exogram.reader_slots import ReaderBusy

logger = logging.getLogger(__name__)

SERVER_NAME = "exogram"
SEARCHES_BUSY = "Your other searches are still running. Try again in a moment."
DATABASE_FAILED = "The library could not be read just now; try again in a moment."
INSTRUCTIONS = (
    "Exogram holds one reader's book highlights (Kindle and other e-readers) and their "
    "notes. Use search_highlights to find what they have read about a subject, then "
    "get_highlight or find_connections to follow one passage across books. Quote "
    "highlights with their book, author and location, which every result carries. "
    "add_note is the only tool that changes anything: use it only when the reader asks."
)


class _Arguments(BaseModel):
    # Unknown keys and loose types are refused: a model that sends `limit: "ten"` hears why.
    model_config = ConfigDict(extra="forbid", strict=True)


class SearchArguments(_Arguments):
    query: str = Field(
        min_length=1,
        max_length=QUERY_MAX_LENGTH,
        description='Words or a question. "Quoted phrases", -excluded words and `or` work.',
    )
    mode: Literal["auto", "keyword", "meaning"] = Field(
        "auto",
        description="auto (words and meaning; the default), keyword (exact words), "
        "meaning (similar ideas in other words).",
    )
    limit: int = Field(10, ge=1, le=library_api.SEARCH_MAX_LIMIT, description="Results (10).")
    offset: int = Field(
        0, ge=0, le=library_api.OFFSET_MAX, description="Skip this many (for the next page)."
    )
    book: str | None = Field(
        None, description="Only this book: a book code from list_books or an earlier result."
    )


class CodeArguments(_Arguments):
    code: str = Field(description="A highlight's code, as given in earlier results.")


class ConnectionsArguments(CodeArguments):
    limit: int = Field(10, ge=1, le=library_api.CONNECTIONS_MAX_LIMIT, description="At most.")


class BooksArguments(_Arguments):
    query: str | None = Field(None, description="Words of a title or an author's name.")


class BookHighlightsArguments(_Arguments):
    book_code: str = Field(description="The book's code, from list_books.")
    offset: int = Field(
        0, ge=0, le=library_api.OFFSET_MAX, description="Skip this many (for the next page)."
    )
    limit: int = Field(50, ge=1, le=library_api.BOOK_HIGHLIGHTS_MAX_LIMIT, description="At most.")


class NoteArguments(CodeArguments):
    text: str = Field(min_length=1, max_length=NOTE_MAX_LENGTH, description="The note's words.")


class _Tool:
    def __init__(
        self,
        name: str,
        description: str,
        arguments: type[_Arguments],
        run: Callable[[User, Any], dict[str, Any]],
        *,
        read_only: bool = True,
    ) -> None:
        self.name = name
        self.description = description
        self.arguments = arguments
        self.run = run
        self.read_only = read_only

    def definition(self) -> types.Tool:
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=schema,
            # add_note appends: calling it twice writes the words twice.
            annotations=types.ToolAnnotations(
                read_only_hint=self.read_only,
                destructive_hint=False,
                idempotent_hint=self.read_only,
            ),
        )


TOOLS = [
    _Tool(
        "search_highlights",
        "Search the reader's highlights and notes. Use it first for any question about what "
        "they have read ('what have I read about memory?'). Finds passages by their words and "
        "by their meaning, best first; each result has the text, the reader's note, the "
        "book, the author and the location to cite, and a code for the other tools. When "
        "the embedding model is unavailable it searches by words only and says so in "
        "`notice`. `next_offset` is the offset of the next page (null on the last); "
        "`total_capped` true means more highlights match than were ranked: narrow the query.",
        SearchArguments,
        lambda reader, a: library_api.library_search(
            reader, query=a.query, mode=a.mode, limit=a.limit, offset=a.offset, book=a.book
        ),
    ),
    _Tool(
        "get_highlight",
        "One highlight in full by its code: text, the reader's note, book, author, page and "
        "location, when it was added, its tags, and its connections (passages from the "
        "reader's other books that carry the same idea), with `state` and `nearest` as "
        "find_connections has them. Use it to quote a passage exactly "
        "or to look closer at a search result.",
        CodeArguments,
        lambda reader, a: library_api.library_highlight(reader, code=a.code),
    ),
    _Tool(
        "find_connections",
        "Passages from the reader's other books that say the same thing as one highlight, "
        "other authors first, then the likeliest first. Each has `strength` ('same idea' or "
        "'related') and `likely_related_percent`: how likely (0-100) the pair judge thinks "
        "a reader would call the two related. `state` says whether the highlight is ready "
        "for connections ('waiting': not yet; 'word': never connected), and `state_said` "
        "says it as the highlight's page does. "
        "With no connection from another author, `nearest` holds the passages the "
        "highlight's page shows as nearest, each with its percentage: they are NOT "
        "connections (`connection` false), say so when you quote them. Use it to answer "
        "'where else have I read this?' or to draw threads between books.",
        ConnectionsArguments,
        lambda reader, a: library_api.library_connections_of(reader, code=a.code, limit=a.limit),
    ),
    _Tool(
        "list_books",
        "The reader's books (title, author, number of highlights, book code), by title. "
        "Use it to find a book's code for book_highlights or for search_highlights' book "
        "filter; `query` narrows by words of the title or the author.",
        BooksArguments,
        lambda reader, a: library_api.library_books(reader, query=a.query),
    ),
    _Tool(
        "book_highlights",
        "A book's highlights in reading order, a page at a time (`next_offset` is the "
        "offset of the next page, null on the last). Use it to summarize or walk through "
        "what the reader marked in one book.",
        BookHighlightsArguments,
        lambda reader, a: library_api.library_book_highlights(
            reader, book_code=a.book_code, offset=a.offset, limit=a.limit
        ),
    ),
    _Tool(
        "add_note",
        "Add words to the reader's note on a highlight (after any note already there). The "
        "only tool that changes the library; it never changes the highlighted text. As in "
        "the reader's own notes, a #hashtag the note did not name before becomes a tag of "
        f"the highlight (at most {HASHTAGS_PER_NOTE} new ones a note; one the note named "
        "already, whose tag the reader may have removed, is not added again); `tags_added` "
        "in the answer names the tags it added. Use it only when the reader asks you to "
        "note something.",
        NoteArguments,
        lambda reader, a: library_api.library_note_add(reader, code=a.code, text=a.text),
        read_only=False,
    ),
]
_BY_NAME = {tool.name: tool for tool in TOOLS}


def _invalid_arguments(tool: str, error: ValidationError) -> MCPError:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    message = f"Invalid arguments for {tool}: " + "; ".join(problems)
    return MCPError(code=types.INVALID_PARAMS, message=message, data={"tool": tool})


def _call(reader: User, tool: _Tool, arguments: _Arguments) -> dict[str, Any]:
    # A long-lived process: a connection the database dropped is replaced, not reused.
    close_old_connections()
    return tool.run(reader, arguments)


def build_server(reader: User) -> Server[Any]:
    """The MCP server for one reader: every tool reads and writes their library only."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool.definition() for tool in TOOLS])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = _BY_NAME.get(params.name)
        if tool is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool: {params.name}. Tools: {', '.join(_BY_NAME)}.",
            )
        try:
            arguments = tool.arguments.model_validate(params.arguments or {})
        except ValidationError as error:
            raise _invalid_arguments(tool.name, error) from None
        try:
            answer = await sync_to_async(_call, thread_sensitive=True)(reader, tool, arguments)
        except (library_api.NotFound, library_api.BadArgument, ReaderBusy) as error:
            text = SEARCHES_BUSY if isinstance(error, ReaderBusy) else str(error)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=True
            )
        except DatabaseError:
            # Logged; the client gets no database internals.
            logger.exception("MCP tool %s failed on the database", tool.name)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=DATABASE_FAILED)], is_error=True
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(answer, ensure_ascii=False))],
            structured_content=answer,
        )

    return Server(
        SERVER_NAME,
        version="1",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _refusal(error: Exception) -> types.JSONRPCError | None:
    """The answer to a line the transport could not read as one JSON-RPC message (None for
    a blank line): -32700 for a line that is not JSON, -32600 for JSON that is not a message.

    A batch (a JSON array) is -32600 too. JSON-RPC 2.0 allows batches, and MCP 2025-03-26
    required servers to take them, but 2025-06-18 removed them, and the server answers
    `initialize` with the client's version or else the SDK's latest, 2025-11-25."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    sent = problems[0].get("input") if problems else None
    if any(problem["type"] == "json_invalid" for problem in problems):
        if isinstance(sent, str) and not sent.strip():
            return None
        code, message = types.PARSE_ERROR, "Parse error: the line is not JSON."
    elif isinstance(sent, list):
        code, message = (
            types.INVALID_REQUEST,
            "Invalid Request: batches (JSON arrays) are not part of MCP since 2025-06-18; "
            "send one message a line.",
        )
    else:
        code, message = (
            types.INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response.",
        )
    request_id = sent.get("id") if isinstance(sent, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None  # JSON-RPC's "id": null, when the id cannot be read
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


class _Lines(Protocol):
    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...


class _Replies(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


class _AnsweringUnreadableLines:
    """The stdio transport's read stream, minus the lines it could not read, each answered
    here. The SDK hands them to the server as exceptions, which it only logs at debug
    level: the client heard nothing and waited."""

    def __init__(
        self,
        lines: _Lines,
        replies: _Replies,
    ) -> None:
        self._lines = lines
        self._replies = replies

    @property
    def last_context(self) -> Any:
        # The sender's context, which the SDK's dispatcher runs each request in.
        return getattr(self._lines, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._lines.receive()
            if isinstance(item, SessionMessage):
                return item
            refusal = _refusal(item)
            if refusal is not None:
                logger.warning("MCP: %s (code %s)", refusal.error.message, refusal.error.code)
                await self._replies.send(SessionMessage(refusal))

    async def aclose(self) -> None:
        await self._lines.aclose()

    def __aiter__(self) -> "_AnsweringUnreadableLines":
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> "_AnsweringUnreadableLines":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def serve_stdio(reader: User) -> None:
    """Serve one reader's library over stdin/stdout until the client closes the pipe."""
    server = build_server(reader)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(
                _AnsweringUnreadableLines(read_stream, write_stream),
                write_stream,
                server.create_initialization_options(),
            )

    anyio.run(main)
