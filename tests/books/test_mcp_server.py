"""`manage.py mcp` as an assistant runs it: a real subprocess, JSON-RPC over stdio."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from accounts.models import User
from books.connections.selectors import connections_for, highlight_connections
from books.importing.services import clippings_import
from books.models import Book, Highlight
from tests.books.kindle import Entry, clippings_file
from tests.books.mcp_client import McpProcess, tool_answer

MEMORY = "The Art of Memory (Yates, Frances)"
DIARY = "Diaries (Wilde, Oscar)"
GARDEN = "The Well-Tempered Garden (Lloyd, Christopher)"

LIBRARY = [
    Entry(MEMORY, "Memory is the diary that we all carry about with us.", location="100-101"),
    Entry(MEMORY, "The palace of memory has many rooms.", location="200-201"),
    Entry(MEMORY, "Rooms for everything.", kind="Note", location="201"),
    Entry(DIARY, "Memory is the diary we all carry about with us.", location="50-51"),
    Entry(GARDEN, "Prune the roses hard in late winter, before the buds swell.", location="7-8"),
]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def library(alice: User) -> dict[str, Highlight]:
    clippings_import(reader=alice, data=clippings_file(*LIBRARY), file_name="clippings.txt")
    by_text = {h.text: h for h in Highlight.objects.select_related("book").filter(reader=alice)}
    return {
        "diary": by_text["Memory is the diary that we all carry about with us."],
        "palace": by_text["The palace of memory has many rooms."],
        "wilde": by_text["Memory is the diary we all carry about with us."],
        "roses": by_text["Prune the roses hard in late winter, before the buds swell."],
    }


@pytest.fixture
def server(tmp_path: Path, library: dict[str, Highlight]) -> Iterator[McpProcess]:
    process = McpProcess("alice", data_dir=tmp_path)
    process.initialize()
    yield process
    process.close()


def _cites(row: dict[str, object]) -> None:
    assert row["book"], row
    assert row["author"], row
    assert row["location"], row


class HandshakeTests:
    def test_it_answers_initialize_with_its_name_tools_and_instructions(
        self, tmp_path: Path, alice: User
    ) -> None:
        process = McpProcess("alice", data_dir=tmp_path)
        try:
            answer = process.initialize()
        finally:
            code = process.close()
        result = answer["result"]
        assert result["serverInfo"]["name"] == "exogram"
        assert "tools" in result["capabilities"]
        assert "search_highlights" in result["instructions"]
        assert code == 0

    def test_it_lists_the_six_tools_with_descriptions_and_schemas(self, server: McpProcess) -> None:
        tools = {tool["name"]: tool for tool in server.request("tools/list")["result"]["tools"]}
        assert set(tools) == {
            "search_highlights", "get_highlight", "find_connections", "list_books",
            "book_highlights", "add_note",
        }  # fmt: skip
        search = tools["search_highlights"]
        assert search["inputSchema"]["required"] == ["query"]
        assert set(search["inputSchema"]["properties"]) == {
            "query", "mode", "limit", "offset", "book",
        }  # fmt: skip
        assert all(len(tool["description"]) > 80 for tool in tools.values())
        assert tools["add_note"]["annotations"]["readOnlyHint"] is False
        # What its hashtags do, said as the note editor does it: new ones, twenty at most.
        assert "a #hashtag the note did not name before" in tools["add_note"]["description"]
        assert "at most 20 new ones a note" in tools["add_note"]["description"]
        assert tools["add_note"]["annotations"]["idempotentHint"] is False
        assert tools["get_highlight"]["annotations"]["readOnlyHint"] is True

    def test_it_refuses_an_unknown_reader(self, tmp_path: Path, db: None) -> None:
        process = McpProcess("nobody", data_dir=tmp_path)
        assert process.close() != 0
        assert "No reader named 'nobody'" in (tmp_path / "mcp.log").read_text()


class ToolTests:
    def test_it_searches_with_a_citation_on_every_result(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        answer = tool_answer(server.call("search_highlights", {"query": "memory diary"}))
        assert answer["mode_used"] == "hybrid"
        codes = [row["code"] for row in answer["results"]]
        assert set(codes[:2]) == {
            str(library["diary"].code),
            str(library["wilde"].code),
        }
        for row in answer["results"]:
            _cites(row)
        first = answer["results"][0]
        assert first["location"] in {"Location 100-101", "Location 50-51"}

    def test_it_searches_one_book_only(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        book = str(library["wilde"].book.code)
        answer = tool_answer(server.call("search_highlights", {"query": "memory", "book": book}))
        assert [row["code"] for row in answer["results"]] == [str(library["wilde"].code)]

    def test_it_gets_a_highlight_with_its_note_and_connections(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        answer = tool_answer(server.call("get_highlight", {"code": str(library["palace"].code)}))
        assert answer["text"] == "The palace of memory has many rooms."
        assert answer["note"] == "Rooms for everything."
        assert answer["book"] == "The Art of Memory"
        assert answer["author"] == "Yates, Frances"
        assert answer["location"] == "Location 200-201"
        assert answer["added_at"].startswith("2025-03-03")
        diary = tool_answer(server.call("get_highlight", {"code": str(library["diary"].code)}))
        assert [c["code"] for c in diary["connections"]] == [str(library["wilde"].code)]
        _cites(diary["connections"][0])

    def test_it_finds_connections_across_books(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        code = str(library["wilde"].code)
        answer = tool_answer(server.call("find_connections", {"code": code, "limit": 5}))
        assert answer["highlight"]["code"] == code
        assert [c["code"] for c in answer["connections"]] == [str(library["diary"].code)]
        assert answer["connections"][0]["strength"] in {"same idea", "related"}
        # The percentage the description promises: the judge's, as the highlight page shows.
        assert answer["connections"][0]["likely_related_percent"] == (
            connections_for(library["wilde"])[0].percent
        )
        tools = {tool["name"]: tool for tool in server.request("tools/list")["result"]["tools"]}
        assert "likely_related_percent" in tools["find_connections"]["description"]
        _cites(answer["connections"][0])

    def test_it_says_a_lone_highlight_is_read_and_gives_the_pages_nearest(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        roses = library["roses"]
        answer = tool_answer(server.call("find_connections", {"code": str(roses.code)}))
        assert answer["connections"] == []
        assert answer["state"] == "read"
        # The words of the page's nearest passages (books.connections.said), not "Read by
        # the model … yet".
        assert answer["state_said"].startswith("The closest passages from your other books")
        assert "Read by the model" not in answer["state_said"]
        page = highlight_connections(roses)
        assert [n["code"] for n in answer["nearest"]] == [
            str(c.highlight.code) for c in page.nearest
        ]
        assert answer["nearest"]
        assert [n["likely_related_percent"] for n in answer["nearest"]] == [
            c.percent for c in page.nearest
        ]
        assert {n["connection"] for n in answer["nearest"]} == {False}
        _cites(answer["nearest"][0])
        tools = {tool["name"]: tool for tool in server.request("tools/list")["result"]["tools"]}
        assert "NOT connections" in tools["find_connections"]["description"]

    def test_it_lists_books_and_narrows_them(self, server: McpProcess) -> None:
        every = tool_answer(server.call("list_books", {}))
        # By title, leading articles aside (books.selectors.books_for).
        assert [b["title"] for b in every["books"]] == [
            "The Art of Memory", "Diaries", "The Well-Tempered Garden",
        ]  # fmt: skip
        assert [b["highlights"] for b in every["books"]] == [2, 1, 1]
        narrowed = tool_answer(server.call("list_books", {"query": "lloyd"}))
        assert [b["title"] for b in narrowed["books"]] == ["The Well-Tempered Garden"]

    def test_it_pages_through_a_book_in_reading_order(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        book = str(library["diary"].book.code)
        first = tool_answer(server.call("book_highlights", {"book_code": book, "limit": 1}))
        assert first["total"] == 2
        assert [h["code"] for h in first["highlights"]] == [str(library["diary"].code)]
        assert first["next_offset"] == 1
        second = tool_answer(
            server.call("book_highlights", {"book_code": book, "offset": 1, "limit": 1})
        )
        assert [h["code"] for h in second["highlights"]] == [str(library["palace"].code)]
        assert second["next_offset"] is None
        _cites(second["highlights"][0])

    def test_it_pages_through_search_results(self, server: McpProcess) -> None:
        asked = {"query": "memory", "mode": "keyword"}
        every = tool_answer(server.call("search_highlights", asked))
        codes = [row["code"] for row in every["results"]]
        assert (len(codes), every["total"], every["total_capped"]) == (3, 3, False)
        second = tool_answer(server.call("search_highlights", {**asked, "limit": 2, "offset": 2}))
        assert [row["code"] for row in second["results"]] == codes[2:]
        assert (second["offset"], second["next_offset"]) == (2, None)

    def test_it_adds_a_note_and_never_touches_the_text(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        palace = library["palace"]
        answer = tool_answer(
            server.call("add_note", {"code": str(palace.code), "text": "  See also Cicero. "})
        )
        assert answer["note"] == "Rooms for everything.\n\nSee also Cicero."
        palace.refresh_from_db()
        assert palace.text == "The palace of memory has many rooms."
        assert palace.note == "Rooms for everything.\n\nSee also Cicero."
        assert palace.note_edited is True

    def test_a_notes_hashtags_tag_the_highlight_as_the_note_editor_does(
        self, server: McpProcess, library: dict[str, Highlight]
    ) -> None:
        palace = library["palace"]

        first = server.call("add_note", {"code": str(palace.code), "text": "#Cicero #loci"})
        again = server.call("add_note", {"code": str(palace.code), "text": "and #loci again"})

        assert sorted(palace.tags.values_list("name", flat=True)) == ["cicero", "loci"]
        added = [tool_answer(answer)["tags_added"] for answer in (first, again)]
        assert added == [["cicero", "loci"], []]


# Lines that are not one JSON-RPC message: each answer's id, code and words.
UNREADABLE_LINES = [
    (b"{not json", None, -32700, "Parse error"),
    (b'[{"jsonrpc": "2.0", "id": 9, "method": "ping"}]', None, -32600, "batches"),
    (b"[]", None, -32600, "batches"),
    (b'{"jsonrpc": "2.0", "id": 7}', 7, -32600, "Invalid Request"),
    (b"42", None, -32600, "Invalid Request"),
]


class ErrorTests:
    def test_it_answers_an_unknown_tool_with_a_jsonrpc_error(self, server: McpProcess) -> None:
        answer = server.call("delete_everything", {})
        assert "result" not in answer
        assert answer["error"]["code"] == -32602
        assert "Unknown tool: delete_everything" in answer["error"]["message"]

    @pytest.mark.parametrize(
        ("tool", "arguments", "names"),
        [
            ("search_highlights", {}, "query"),
            ("search_highlights", {"query": "memory", "limit": "ten"}, "limit"),
            ("search_highlights", {"query": "memory", "limit": 0}, "limit"),
            ("search_highlights", {"query": "memory", "mode": "telepathy"}, "mode"),
            ("get_highlight", {"code": "x", "colour": "red"}, "colour"),
            ("book_highlights", {"book_code": "x", "offset": -1}, "offset"),
            # Past PostgreSQL's bigint: the database's own message used to come back.
            ("book_highlights", {"book_code": "x", "offset": 99999999999999999999}, "offset"),
        ],
    )
    def test_it_answers_bad_arguments_with_a_jsonrpc_error(
        self, server: McpProcess, tool: str, arguments: dict[str, object], names: str
    ) -> None:
        answer = server.call(tool, arguments)
        assert "result" not in answer
        assert answer["error"]["code"] == -32602
        assert f"Invalid arguments for {tool}" in answer["error"]["message"]
        assert names in answer["error"]["message"]

    def test_it_answers_each_line_it_cannot_read_and_serves_the_next(
        self, tmp_path: Path, library: dict[str, Highlight]
    ) -> None:
        server = McpProcess("alice", data_dir=tmp_path)
        try:
            # The version the client asks for, whose rules hold: 2025-06-18 has no batches.
            assert server.initialize()["result"]["protocolVersion"] == "2025-06-18"
            for number, (line, request_id, code, says) in enumerate(UNREADABLE_LINES):
                server.send_line(line)
                server.send_line(b"   ")  # a blank line is no message, and no answer
                server.send({"jsonrpc": "2.0", "id": f"after {number}", "method": "ping"})
                # Its answer comes first: with none, the first line read is the ping's.
                refusal = server.receive()
                assert refusal == {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": code, "message": refusal["error"]["message"]},
                }, line
                assert says in refusal["error"]["message"]
                after = server.receive()
                assert after == {"jsonrpc": "2.0", "id": f"after {number}", "result": {}}
            assert tool_answer(server.call("list_books", {}))["books"]
        finally:
            exit_code = server.close()
        assert exit_code == 0
        log = (tmp_path / "mcp.log").read_text()
        assert "(code -32700)" in log
        assert "(code -32600)" in log

    def test_it_treats_another_readers_code_as_not_found(
        self, server: McpProcess, bob: User
    ) -> None:
        clippings_import(
            reader=bob,
            data=clippings_file(Entry(MEMORY, "Bob's own secret highlight.")),
            file_name="bob.txt",
        )
        theirs = Highlight.objects.get(reader=bob)
        their_book = Book.objects.get(reader=bob)
        for tool, arguments in [
            ("get_highlight", {"code": str(theirs.code)}),
            ("find_connections", {"code": str(theirs.code)}),
            ("add_note", {"code": str(theirs.code), "text": "mine now"}),
            ("book_highlights", {"book_code": str(their_book.code)}),
            ("search_highlights", {"query": "secret", "book": str(their_book.code)}),
            ("get_highlight", {"code": "not-a-code"}),
        ]:
            result = server.call(tool, arguments)["result"]
            assert result["isError"] is True, tool
            assert "in your library" in result["content"][0]["text"]
            assert "secret" not in result["content"][0]["text"]
        theirs.refresh_from_db()
        assert theirs.note == ""
        answer = tool_answer(server.call("search_highlights", {"query": "secret"}))
        # Whatever of alice's own comes up by meaning, bob's highlight never does.
        assert str(theirs.code) not in {result["code"] for result in answer["results"]}
        assert all("secret" not in result["text"] for result in answer["results"])

    def test_it_falls_back_to_keyword_search_without_the_model(
        self, tmp_path: Path, library: dict[str, Highlight]
    ) -> None:
        empty = tmp_path / "no-model"
        empty.mkdir()
        process = McpProcess(
            "alice", data_dir=tmp_path, extra_env={"EXOGRAM_EMBEDDING_MODEL_DIR": str(empty)}
        )
        try:
            process.initialize()
            answer = tool_answer(process.call("search_highlights", {"query": "palace"}))
        finally:
            process.close()
        assert answer["mode_used"] == "keyword"
        assert answer["notice"] == "Keyword results only: the model is unavailable."
        assert [row["code"] for row in answer["results"]] == [str(library["palace"].code)]
        _cites(answer["results"][0])
