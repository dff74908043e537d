"""The Lua-table reader reads KOReader's sidecars as data and runs nothing."""

from pathlib import Path

import pytest

from books.importing.lua_data import (
    MAX_DEPTH,
    Bad,
    LuaDataError,
    LuaTable,
    bad_values,
    read_lua_data,
)
from tests.books.importing.devices import SIDECAR_ANNOTATIONS, hostile_sidecar


class LuaDataTests:
    def test_it_reads_tables_strings_numbers_and_booleans(self) -> None:
        value = read_lua_data(
            '-- a comment\nreturn { ["a"] = "x", ["n"] = -1.5e2, [3] = 0x1F, b = true,'
            " c = false, d = nil, { 1, 2; 3 }, --[[ long\ncomment ]] e = [[long\nstring]] }"
        )
        assert value == {
            "a": "x", "n": -150.0, 3: 31, "b": True, "c": False,
            1: {1: 1, 2: 2, 3: 3}, "e": "long\nstring",
        }  # fmt: skip

    def test_it_reads_every_escape_kind(self) -> None:
        text = (
            r'return { "q\"b\\n\n\t\9\13\1\65\x41\u{1F600}", "one'
            + "\\\n"
            + r'two", "\z'
            + "\n      "
            + r'joined" }'
        )
        value = read_lua_data(text)
        assert value == {1: 'q"b\\n\n\t\t\r\x01AA\U0001f600', 2: "one\ntwo", 3: "joined"}

    def test_it_keeps_raw_utf8(self) -> None:
        assert read_lua_data('return { "café 日本語 🧠 عربى" }') == {1: "café 日本語 🧠 عربى"}

    def test_it_remembers_the_line_each_table_starts_on(self) -> None:
        value = read_lua_data(SIDECAR_ANNOTATIONS)
        assert isinstance(value, LuaTable)
        annotations = value["annotations"]
        assert isinstance(annotations, LuaTable)
        first, second = annotations[1], annotations[2]
        assert isinstance(first, LuaTable)
        assert isinstance(second, LuaTable)
        assert (annotations.line, first.line, second.line) == (3, 4, 11)

    def test_a_call_inside_the_data_is_a_bad_value_with_its_line_and_the_rest_is_read(
        self, tmp_path: Path
    ) -> None:
        marker = tmp_path / "ran"
        value = read_lua_data(hostile_sidecar(marker))
        assert isinstance(value, dict)
        annotations = value["annotations"]
        assert isinstance(annotations, dict)
        second = annotations[2]
        assert isinstance(second, dict)
        assert second["text"] == Bad(14, "'os' (only data is read, nothing is run)")
        assert value["doc_props"] == {"title": "Harmless"}
        assert not marker.exists()

    def test_code_before_the_data_refuses_the_file_with_its_line(self, tmp_path: Path) -> None:
        marker = tmp_path / "ran"
        with pytest.raises(LuaDataError) as refused:
            read_lua_data(hostile_sidecar(marker, first_line=True))
        assert (refused.value.line, refused.value.message) == (
            1,
            "'os' where 'return {' was expected",
        )
        assert not marker.exists()

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("return { f() }", "'f' (only data is read, nothing is run)"),
            ("return { [x] = 1 }", "'x' (only data is read, nothing is run)"),
            ('return { "a" .. "b" }', "'.' where ',' or '}' was expected"),
            ("return { function() end }", "'function' (only data is read, nothing is run)"),
            ('return { "unfinished }', "a string that never ends (only data is read, nothing is run)"),  # noqa: E501
            ('return { "\\q" }', "an unknown escape '\\q' (only data is read, nothing is run)"),
            ("return { 1 + 2 }", "'+' where ',' or '}' was expected"),
            ("return {", "the file ends inside a table"),
        ],
    )  # fmt: skip
    def test_anything_but_data_is_a_bad_value(self, text: str, message: str) -> None:
        value = read_lua_data(text)
        assert message in [bad.message for bad in bad_values(value)]

    def test_it_stops_at_a_nesting_no_sidecar_has(self) -> None:
        deep = "return " + "{" * (MAX_DEPTH + 5) + "}" * (MAX_DEPTH + 5)
        bad = bad_values(read_lua_data(deep))
        assert bad
        assert f"nested more than {MAX_DEPTH} deep" in bad[0].message

    def test_something_that_is_not_a_chunk_is_refused(self) -> None:
        with pytest.raises(LuaDataError):
            read_lua_data("hello world")
        with pytest.raises(LuaDataError):
            read_lua_data("return { } trailing")

    def test_a_table_cut_short_keeps_the_entry_read_under_its_first_number(self) -> None:
        value = read_lua_data('return { [1] = { "kept" },\n')
        assert isinstance(value, dict)
        assert value[1] == {1: "kept"}
        assert value[2] == Bad(2, "the file ends inside a table")

    def test_an_unclosed_quote_is_a_bad_value_on_its_own_line(self) -> None:
        value = read_lua_data('return {\n  "open,\n  "closed",\n  "also",\n}')
        assert isinstance(value, dict)
        [bad] = bad_values(value)
        assert bad.line == 2
        assert bad.message.startswith("a string that never ends")
        assert [v for v in value.values() if isinstance(v, str)] == ["closed", "also"]
