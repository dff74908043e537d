"""Properties of the clippings parser, checked with Hypothesis.

1. No input bytes make it raise, and every entry it sees is either a clipping or a problem.
2. Well-formed files written here, in every UI language and encoding, come back with every
   field of every entry. The writer below is an independent statement of FORMAT.md: it
   shares no code with the parser.
3. The same file with one separator deleted outright comes back with the same entries
   (those after it a line earlier) and one warning, at the title line after the gap.
"""

# The metadata templates below are in ten UI languages.
# ruff: noqa: RUF001

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from books.importing.clippings import (
    CLIPPING_LIMIT_PLACEHOLDERS,
    Clipping,
    ParseResult,
    normalize_author,
    normalize_title,
    parse_clippings,
)

FIXTURES = Path(__file__).parent / "fixtures"
# Moderate example counts: the suite runs on a 2-core machine alongside everything else.
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_every_entry_accounted_for(result: ParseResult) -> None:
    assert len(result.clippings) + len(result.problems) == result.entries
    for clipping in result.clippings:
        assert clipping.line >= 1
        assert clipping.kind in {"highlight", "note", "bookmark", "clip"}
        assert clipping.added_at is None or clipping.added_at.tzinfo is UTC
        assert not clipping.text.endswith(tuple(CLIPPING_LIMIT_PLACEHOLDERS))
    assert all(problem.line >= 1 and problem.message for problem in result.problems)


# Pieces of the format, so that generated noise often looks almost like a clippings file.
FORMAT_TOKENS = [
    "==========",
    "=======",
    "\n",
    "\r\n",
    "\r",
    "\ufeff",
    "- ",
    "– ",
    " | ",
    "|",
    "(",
    ")",
    "Your Highlight on page ",
    "Location ",
    "Loc. ",
    "12-13",
    "5444-45",
    "t/m",
    "Added on Monday, January 4, 2016 9:18:28 AM",
    "Added on ",
    "Hinzugefügt am Mittwoch, 14. Juli 2021 19:06:11",
    "Добавлено: пятница, 6 декабря 2024 г. в 00:14:51",
    "Место 805–806",
    "作成日: 2021年8月3日火曜日 23:24:53",
    "位置No. 1114-1115のハイライト",
    "添加于 2013年12月27日星期五 上午1:58:30",
    "您在第 22 页（位置 #290-291）的标注",
    "GMT+99:99",
    "31 February 2016 25:61:61",
    "<You have reached the clipping limit for this item>",
    "99999999999999999999999999",
]


class NeverRaisesTests:
    @SETTINGS
    @given(st.binary(max_size=3000))
    def test_it_never_raises_on_arbitrary_bytes(self, data: bytes) -> None:
        assert_every_entry_accounted_for(parse_clippings(data))

    @SETTINGS
    @given(
        st.lists(st.sampled_from(FORMAT_TOKENS) | st.text(max_size=8), max_size=80),
        st.sampled_from(["utf-8", "utf-16", "utf-16-be", "cp1252"]),
    )
    def test_it_never_raises_on_text_made_of_format_pieces(
        self, pieces: list[str], encoding: str
    ) -> None:
        data = "".join(pieces).encode(encoding, errors="replace")

        assert_every_entry_accounted_for(parse_clippings(data))

    @SETTINGS
    @given(
        st.sampled_from(sorted(path.name for path in FIXTURES.glob("*.txt"))),
        st.lists(st.tuples(st.floats(0, 1), st.binary(max_size=4), st.integers(0, 6)), max_size=8),
    )
    def test_it_never_raises_on_a_damaged_fixture(
        self, name: str, damage: list[tuple[float, bytes, int]]
    ) -> None:
        data = bytearray((FIXTURES / name).read_bytes())
        for where, inserted, removed in damage:
            at = int(where * len(data))
            data[at : at + removed] = inserted

        assert_every_entry_accounted_for(parse_clippings(bytes(data)))


# --- A writer of well-formed files --------------------------------------------------------


@dataclass
class Entry:
    """One generated entry: the fields to expect back, and how to write them."""

    title: str
    author: str
    kind: str
    text: str
    page: int | None
    location_start: int | None
    location_end: int | None
    added_at: datetime
    language: str
    style: str  # which firmware's wording and date shape to write
    truncated: bool


# Per language: kind nouns, how a metadata line is written, which styles exist.
NOUNS = {
    "en": {"highlight": "Highlight", "note": "Note", "bookmark": "Bookmark"},
    "de": {"highlight": "Ihre Markierung", "note": "Ihre Notiz", "bookmark": "Ihr Lesezeichen"},
    "es": {"highlight": "La subrayado", "note": "La nota", "bookmark": "El marcador"},
    "fr": {"highlight": "surlignement", "note": "note", "bookmark": "signet"},
    "it": {
        "highlight": "La tua evidenziazione",
        "note": "La tua nota",
        "bookmark": "Il tuo segnalibro",
    },
    "nl": {"highlight": "highlight", "note": "notitie", "bookmark": "bladwijzer"},
    "pt": {"highlight": "Seu destaque", "note": "Sua nota", "bookmark": "Seu marcador"},
    "ru": {
        "highlight": "Ваш выделенный отрывок",
        "note": "Ваша заметка",
        "bookmark": "Ваша закладка",
    },
    "ja": {"highlight": "ハイライト", "note": "メモ", "bookmark": "ブックマーク"},
    "zh": {"highlight": "标注", "note": "笔记", "bookmark": "书签"},
}
STYLES = {
    "en": ["us", "uk", "kindle3"],
    "de": ["formal", "um_uhr"],
    "es": ["new", "old", "latam"],
    "fr": ["current"],
    "it": ["current"],
    "nl": ["current"],
    "pt": ["new", "old"],
    "ru": ["current"],
    "ja": ["current"],
    "zh": ["current"],
}
MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre "
    "diciembre",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre "
    "novembre dicembre",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro "
    "dezembro",
    "ru": "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
}
WEEKDAYS = {
    "en": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday",
    "de": "Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag",
    "es": "lunes martes miércoles jueves viernes sábado domingo",
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "it": "lunedì martedì mercoledì giovedì venerdì sabato domenica",
    "nl": "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
    "pt": "segunda-feira terça-feira quarta-feira quinta-feira sexta-feira sábado domingo",
    "ru": "понедельник вторник среда четверг пятница суббота воскресенье",
    "ja": "月曜日 火曜日 水曜日 木曜日 金曜日 土曜日 日曜日",
    "zh": "星期一 星期二 星期三 星期四 星期五 星期六 星期日",
}
PLACEHOLDERS = {
    "en": "<You have reached the clipping limit for this item>",
    "de": " <Sie haben die maximale Anzahl an Clipboard-Einträgen für diesen Inhalt erreicht>",
    "pt": "<Você alcançou o limite de recortes para este item>",
    "ja": "<このアイテムのクリップの上限に達しました>",
}


def written_date(entry: Entry) -> str:
    moment, language, style = entry.added_at, entry.language, entry.style
    weekday = WEEKDAYS[language].split()[moment.weekday()]
    twelve = (moment.hour - 1) % 12 + 1
    if language == "ja":
        return (
            f"{moment.year}年{moment.month}月{moment.day}日{weekday} {moment.hour}:{moment:%M:%S}"
        )
    if language == "zh":
        half = "上午" if moment.hour < 12 else "下午"
        return (
            f"{moment.year}年{moment.month}月{moment.day}日{weekday} {half}{twelve}:{moment:%M:%S}"
        )
    month = MONTHS[language].split()[moment.month - 1]
    if language == "en" and style == "us":
        half = "AM" if moment.hour < 12 else "PM"
        return f"{weekday}, {month} {moment.day}, {moment.year} {twelve}:{moment:%M:%S} {half}"
    if language == "en" and style == "kindle3":
        half = "AM" if moment.hour < 12 else "PM"
        return f"{weekday}, {month} {moment:%d}, {moment.year}, {twelve:02}:{moment:%M} {half}"
    if language == "en":
        return f"{weekday}, {moment.day} {month} {moment.year} {moment:%H:%M:%S}"
    if language == "de" and style == "um_uhr":
        return f"{weekday}, {moment.day}. {month} {moment.year} um {moment:%H:%M:%S} Uhr"
    if language == "de":
        return f"{weekday}, {moment.day}. {month} {moment.year} {moment:%H:%M:%S}"
    if language == "es" and style == "latam":
        half = "a. m." if moment.hour < 12 else "p. m."
        return f"{weekday}, {moment.day} de {month} de {moment.year} {twelve}:{moment:%M:%S} {half}"
    if language in ("es", "pt"):
        return f"{weekday}, {moment.day} de {month} de {moment.year} {moment.hour}:{moment:%M:%S}"
    if language == "ru":
        return f"{weekday}, {moment.day} {month} {moment.year} г. в {moment:%H:%M:%S}"
    return f"{weekday} {moment.day} {month} {moment.year} {moment:%H:%M:%S}"


def written_range(entry: Entry, dash: str = "-") -> str:
    assert entry.location_start is not None
    if entry.location_end is None:
        return str(entry.location_start)
    start, end = str(entry.location_start), str(entry.location_end)
    if entry.style == "kindle3" and len(start) == len(end):
        # Kindle 3 drops the leading digits the end shares with the start: `5444-45`.
        shared = 0
        while shared < len(start) - 1 and start[shared] == end[shared]:
            shared += 1
        end = end[shared:]
    return f"{start}{dash}{end}"


def metadata_line(entry: Entry) -> str:
    language, style, page = entry.language, entry.style, entry.page
    noun = NOUNS[language].get(entry.kind, "")
    has_location = entry.location_start is not None
    added = written_date(entry)
    if language == "en":
        if entry.kind == "clip":
            return f"- Clip This Article at Location {written_range(entry)} | Added on {added}"
        if style == "kindle3":
            parts = [f"- {noun}"]
            if page is not None:
                parts.append(f" on Page {page}")
            if has_location:
                parts.append(f"{' |' if page is not None else ''} Loc. {written_range(entry)} ")
            return "".join(parts) + f" | Added on {added}"
        word = "Location" if style == "us" else "location"
        if page is not None and has_location:
            where = f"on page {page} | {word} {written_range(entry)}"
        elif page is not None:
            where = f"on page {page}"
        else:
            where = f"{'on' if style == 'us' else 'at'} {word} {written_range(entry)}"
        return f"- Your {noun} {where} | Added on {added}"
    if language == "de":
        where = f"bei Position {written_range(entry)}"
        if page is not None:
            where = f"auf Seite {page} | {where}"
        return f"- {noun} {where} | Hinzugefügt am {added}"
    if language == "es":
        if style == "old":
            noun = {"highlight": "Tu subrayado", "note": "Tu nota", "bookmark": "Tu marcador"}[
                entry.kind
            ]
        where = (
            f"en la página {page} | posición {written_range(entry)}"
            if page is not None
            else f"en la posición {written_range(entry)}"
        )
        return f"- {noun} {where} | Añadido el {added}"
    if language == "fr":
        span = written_range(entry)
        return f"- Votre {noun} sur la page {page} | emplacement {span} | Ajouté le {added}"
    if language == "it":
        where = (
            f"a pagina {page} | posizione {written_range(entry)}"
            if page is not None
            else f"alla posizione {written_range(entry)}"
        )
        return f"- {noun} {where} | Aggiunto in data {added}"
    if language == "nl":
        span = written_range(entry, dash=" t/m ")
        return f"- Je {noun} op pagina {page} | locatie {span} | Toegevoegd op {added}"
    if language == "pt":
        where = (
            f"ou posição {written_range(entry)}"
            if style == "old"
            else f"na página {page} | posição {written_range(entry)}"
        )
        return f"- {noun} {where} | Adicionado: {added}"
    if language == "ru":
        span = written_range(entry, dash="–")
        where = f"на странице {page} | Место {span}" if page is not None else f"в месте {span}"
        return f"– {noun} {where} | Добавлено: {added}"
    if language == "ja":
        where = f"位置No. {written_range(entry)}の{noun}"
        if page is not None:
            where = f"{page}ページ|{where}"
        return f"- {where} |作成日: {added}"
    span = written_range(entry)
    spaced = "" if entry.location_end is not None else " "  # `#469-471的` but `#471 的`
    where = f"第 {page} 页（位置 #{span}）" if page is not None else f"位置 #{span}{spaced}"
    return f"- 您在{where}的{noun} | 添加于 {added}"


def title_line(entry: Entry) -> str:
    return f"{entry.title} ({entry.author})" if entry.author else entry.title


# Invented words in several scripts; no parentheses, dashes or bars, which the title line
# and metadata line give meaning to.
WORDS = [
    *["harbour", "lantern", "orchard", "salt", "engine", "quiet", "river", "winter"],
    *["faro", "marea", "noche", "Zeit", "Öl", "île", "été", "café", "1984", "vol.2"],
    *["海风", "旧信", "灯塔", "静かな", "時計", "маяк", "прилив"],
]
NAMES = ["Ada Okafor", "Ren Tanaka", "Lucía Ibarra", "Konrad Brandt", "Андрей Соколов", "林远"]


@st.composite
def words(draw: st.DrawFn, min_size: int = 1, max_size: int = 6) -> str:
    return " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=min_size, max_size=max_size)))


@st.composite
def authors(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(["none", "first_last", "last_first", "several"]))
    if shape == "none":
        return ""
    if shape == "first_last":
        return draw(st.sampled_from(NAMES))
    if shape == "last_first":
        first, last = draw(st.sampled_from(NAMES[:-1])).rsplit(" ", 1)
        return f"{last}, {first}"
    return ";".join(draw(st.lists(st.sampled_from(NAMES), min_size=2, max_size=3)))


@st.composite
def bodies(draw: st.DrawFn) -> str:
    # Lines may start like a metadata line: the parser must keep them as text.
    lines = draw(
        st.lists(
            st.tuples(st.sampled_from(["", "- ", "– ", "- Your Highlight on page 3 | "]), words()),
            min_size=1,
            max_size=3,
        )
    )
    text = "\n".join(prefix + line for prefix, line in lines)
    if draw(st.booleans()) and len(lines) > 1:
        text = text.replace("\n", "\n\n", 1)  # a blank line inside a typed note
    return text


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    language = draw(st.sampled_from(sorted(NOUNS)))
    style = draw(st.sampled_from(STYLES[language]))
    kinds = ["highlight", "note", "bookmark"] + (["clip"] if language == "en" else [])
    kind = draw(st.sampled_from(kinds))
    # Which of page and location the firmware writes.
    needs_page = language in ("fr", "nl") or (language == "pt" and style == "new")
    needs_location = not (language == "en" and style in ("us", "uk", "kindle3")) or kind == "clip"
    page = draw(st.integers(1, 3000)) if needs_page or draw(st.booleans()) else None
    if (language == "pt" and style == "old") or kind == "clip":
        page = None
    has_location = needs_location or page is None or draw(st.booleans())
    start = draw(st.integers(1, 99_999)) if has_location else None
    end = None
    if start is not None and kind == "highlight" and draw(st.booleans()):
        end = start + draw(st.integers(0, 40))
    seconds = style != "kindle3"
    added_at = draw(
        st.datetimes(min_value=datetime(2008, 1, 1), max_value=datetime(2030, 12, 31))
    ).replace(microsecond=0, second=0 if not seconds else draw(st.integers(0, 59)))
    truncated = kind == "highlight" and language in PLACEHOLDERS and draw(st.integers(0, 9)) == 0
    text = "" if kind == "bookmark" or truncated else draw(bodies())
    return Entry(
        title=draw(words()),
        author=draw(authors()),
        kind=kind,
        text=text,
        page=page,
        location_start=start,
        location_end=end,
        added_at=added_at.replace(tzinfo=UTC),
        language=language,
        style=style,
        truncated=truncated,
    )


def written_file(generated: list[Entry], layout: random.Random) -> tuple[str, list[Clipping]]:
    """The file's text (LF line endings) and the clippings a parser should find in it."""
    text = layout.choice(["", "\n", "==========\n", "\n==========\n"])
    expected = []
    for entry in generated:
        line = text.count("\n") + 1
        bom = "\ufeff" if layout.random() < 0.2 else ""
        body = PLACEHOLDERS[entry.language] if entry.truncated else entry.text
        blank_after_metadata = "\n" if layout.random() < 0.9 else ""
        text += f"{bom}{title_line(entry)}\n{metadata_line(entry)}\n{blank_after_metadata}"
        text += f"{body}\n==========\n"
        expected.append(
            Clipping(
                title=entry.title,
                author=entry.author,
                kind=entry.kind,
                text=entry.text,
                page=None if entry.page is None else str(entry.page),
                location_start=entry.location_start,
                location_end=entry.location_end,
                added_at=entry.added_at,
                added_raw=written_date(entry),
                language=entry.language,
                line=line,
                truncated=entry.truncated,
            )
        )
    if layout.random() < 0.3:
        text = text.removesuffix("\n")  # no final newline
    return text, expected


class RoundTripTests:
    @SETTINGS
    @given(
        st.lists(entries(), min_size=1, max_size=12),
        st.randoms(use_true_random=False),
        st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-be"]),
        st.sampled_from(["\n", "\r\n"]),
    )
    def test_it_reads_back_every_field_of_a_written_file(
        self, generated: list[Entry], layout: random.Random, encoding: str, newline: str
    ) -> None:
        text, expected = written_file(generated, layout)
        data = text.replace("\n", newline).encode(encoding)
        if encoding == "utf-16-be":
            data = b"\xfe\xff" + data

        result = parse_clippings(data)

        assert result.problems == []
        assert result.clippings == expected
        assert result.entries == len(generated)


class MissingSeparatorTests:
    @SETTINGS
    @given(
        st.lists(entries(), min_size=2, max_size=8),
        st.randoms(use_true_random=False),
        st.data(),
        st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]),
        st.sampled_from(["\n", "\r\n"]),
    )
    def test_a_file_with_one_separator_deleted_reads_the_same_and_says_where(
        self,
        generated: list[Entry],
        layout: random.Random,
        data: st.DataObject,
        encoding: str,
        newline: str,
    ) -> None:
        text, expected = written_file(generated, layout)
        lines = text.split("\n")
        # The separators that end an entry with another one after it (the file may start
        # with one more, which ends nothing).
        separators = [index for index, line in enumerate(lines) if line == "=========="]
        between = separators[-len(generated) :][:-1]
        deleted = data.draw(st.sampled_from(between))
        damaged = "\n".join(lines[:deleted] + lines[deleted + 1 :])
        # Lines are 1-based: the deleted separator was line deleted + 1.
        moved = [
            replace(clipping, line=clipping.line - (clipping.line > deleted + 1))
            for clipping in expected
        ]
        [after] = [clipping for clipping in moved if clipping.line == deleted + 1]

        result = parse_clippings(damaged.replace("\n", newline).encode(encoding))

        assert result.problems == []
        assert result.clippings == moved
        assert result.entries == len(generated)
        [warning] = result.warnings
        assert warning.line == after.line
        assert warning.message.startswith("a separator seems to be missing before this line")
        title = f"{after.title} ({after.author})" if after.author else after.title
        assert f"'{title[:60]}" in warning.message


class NormalizeTests:
    @SETTINGS
    @given(st.text(max_size=40))
    def test_it_normalizes_titles_idempotently(self, title: str) -> None:
        once = normalize_title(title)

        assert normalize_title(once) == once

    @SETTINGS
    @given(
        st.text(st.characters(categories=["Lu", "Ll"]), min_size=1, max_size=10),
        st.text(st.characters(categories=["Lu", "Ll"]), min_size=1, max_size=10),
    )
    def test_it_gives_last_first_and_first_last_one_key(self, first: str, last: str) -> None:
        assert normalize_author(f"{last}, {first}") == normalize_author(f"{first} {last}")
