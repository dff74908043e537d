"""Read the Kindle's metadata line, an entry's second line, in the ten UI languages it uses.

This module decides whether a line is a metadata line at all, and if it is, what it says:
the entry's kind (highlight, note, bookmark, clip), the UI language, the page, the location
range (Kindle 2/3's shortened ends filled in) and the date it was added, read as UTC. The
entry parser (books.importing.clippings) asks it of every entry's second line, of a title
line that may be a metadata line instead, and of the line after a damaged separator.

Pure Python, no Django. FORMAT.md §3, beside the real files in `../shared/data/clippings/`,
lists the variants; the comments below quote the lines that made each rule necessary.
"""

# This module reads ten UI languages; the Cyrillic, CJK, full-width and en-dash characters
# its comments quote are the Kindle's own, not look-alikes typed by mistake.
# ruff: noqa: RUF003

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache

EN_DASH = "\u2013"
# The first character of a metadata line (see parse_metadata_line).
DASHES = ("-", EN_DASH)

# What a metadata line says: kind, language, page, location start and end, date, raw date.
Metadata = tuple[str, str, str | None, int | None, int | None, datetime | None, str]

# The last segment names the UI language: `| Added on …`, `| Hinzugefügt am …`, and
# Japanese `|作成日: …` without a space. The labels differ across languages, so they decide
# the language even when the date itself is written another way. Each label is a named
# group so that `lastgroup` is the language code.
_ADDED_LABEL_RE = re.compile(
    r"(?P<en>added on)|(?P<de>hinzugefügt am)|(?P<es>añadido el)|(?P<fr>ajouté le)"
    r"|(?P<it>aggiunto in data)|(?P<nl>toegevoegd op)|(?P<pt>adicionado:)|(?P<ru>добавлено:)"
    r"|(?P<ja>作成日:)|(?P<zh>添加于)",
    flags=re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _UiWords:
    """The words one UI language puts before the date, casefolded (FORMAT.md §3)."""

    kinds: tuple[tuple[str, str], ...]  # (word, kind)
    page: str  # the word beside the page number
    location: str  # the word before the location
    number_before_page: bool = False  # `133ページ`, `第 22 页` rather than `page 22`


# Found with `in` and str.find rather than searched for with regular expressions: this
# runs for every entry, and a search costs several times more. Dictionary order matters
# for a line without a date label: the first language with a matching kind word wins
# (`highlight` is en before nl, `note` en before fr, `nota` es before it and pt).
_UI_WORDS = {
    # `- Your Highlight on page 4 | Location 439-440`, `- Highlight Loc. 5444-45`,
    # `- Clip This Article at Location 850`
    "en": _UiWords(
        kinds=(
            ("clip this article", "clip"),
            ("highlight", "highlight"),
            ("note", "note"),
            ("bookmark", "bookmark"),
        ),
        page="page",
        location="loc",
    ),
    # `- Ihre Markierung auf Seite 178 | bei Position 4136-4137`
    "de": _UiWords(
        kinds=(("markierung", "highlight"), ("notiz", "note"), ("lesezeichen", "bookmark")),
        page="seite",
        location="position",
    ),
    # `- La subrayado en la página 79 | posición 1293-1295`, `- Tu marcador en la posición 5`
    "es": _UiWords(
        kinds=(("subrayado", "highlight"), ("nota", "note"), ("marcador", "bookmark")),
        page="página",
        location="posición",
    ),
    # `- Votre surlignement sur la page 14 | emplacement 122-123`
    "fr": _UiWords(
        kinds=(("surlignement", "highlight"), ("note", "note"), ("signet", "bookmark")),
        page="page",
        location="emplacement",
    ),
    # `- La tua evidenziazione a pagina 112 | posizione 1300-1301`
    "it": _UiWords(
        kinds=(("evidenziazione", "highlight"), ("nota", "note"), ("segnalibro", "bookmark")),
        page="pagina",
        location="posizione",
    ),
    # `- Je highlight op pagina 79 | locatie 1293 t/m 1295`
    "nl": _UiWords(
        kinds=(("highlight", "highlight"), ("notitie", "note"), ("bladwijzer", "bookmark")),
        page="pagina",
        location="locatie",
    ),
    # `- Seu destaque na página 68 | posição 805-809`, `- Seu destaque ou posição 77-80`
    "pt": _UiWords(
        kinds=(("destaque", "highlight"), ("nota", "note"), ("marcador", "bookmark")),
        page="página",
        location="posição",
    ),
    # `– Ваш выделенный отрывок на странице 486 | Место 7438–7439`, `… в месте 805–806`
    "ru": _UiWords(
        kinds=(("выделенный отрывок", "highlight"), ("заметка", "note"), ("закладка", "bookmark")),
        page="странице",
        location="мест",
    ),
    # `- 133ページ|位置No. 1647-1648のハイライト`, `- 位置 No. 2011のブックマーク`
    "ja": _UiWords(
        kinds=(("ハイライト", "highlight"), ("メモ", "note"), ("ブックマーク", "bookmark")),
        page="ページ",
        location="位置",
        number_before_page=True,
    ),
    # `- 您在第 22 页（位置 #290-291）的标注`, 2013's `- 我的书签 在 第 65 页`
    "zh": _UiWords(
        kinds=(("标注", "highlight"), ("笔记", "note"), ("书签", "bookmark")),
        page="页",
        location="位置",
        number_before_page=True,
    ),
}

# Page labels are digits, Roman numerals (`on page xix`) or a PDF's range (`on page 13-13`).
_PAGE_TOKEN = "[0-9a-z]{1,12}(?: ?[-\u2013] ?[0-9a-z]{1,12})?"
_PAGE_AFTER_WORD_RE = re.compile(rf"\s*(?P<page>{_PAGE_TOKEN})")
_PAGE_BEFORE_WORD_RE = re.compile(rf"(?P<page>{_PAGE_TOKEN})\s*$")
# After the location word: `Loc. 5444-45` (Kindle 2/3 abbreviate the end), `Location 390`,
# `locatie 1293 t/m 1295` (Dutch), `Место 7438–7439` (Russian en dash), `位置No. 1114-1115`,
# `位置 #469-471`. Digits are capped so that int() stays cheap; a number past
# LOCATION_MAX is a problem of its entry, never cut down to fit (`Location 99999999999`
# was once stored as 999999999).
_LOCATION_AFTER_WORD_RE = re.compile(
    r"[^0-9|]{0,8}?(?P<start>[0-9]{1,20})(?:\s*(?:-|\u2013|t/m)\s*(?P<end>[0-9]{1,20}))?"
)
# What the database's location columns hold; a real book has well under a million.
LOCATION_MAX = 2**31 - 1


def parse_metadata_line(line: str) -> Metadata | None:
    """Read an entry's second line, or return None when it is not a metadata line."""
    line = line.strip()
    # `- ` in every language but Russian, which writes an en dash: `– Ваша заметка …`.
    if line[:1] not in DASHES:
        return None
    head, bar, last = line.rpartition("|")
    last = last.strip()
    label = _ADDED_LABEL_RE.match(last) if bar else None
    if label is not None:
        language = label.lastgroup
        added_raw = last[label.end() :].strip()
        added_at = _parse_date(added_raw, language)
    else:
        # No known label: the last segment is a date written some unknown way only if a
        # date can be read from it; otherwise it belongs with the page and location.
        language = None
        added_at = _parse_date(last, None) if bar else None
        added_raw = last if added_at is not None else ""
        if added_at is None:
            head = line

    folded = head.casefold()
    found = _find_kind(folded, language)
    if found is None:
        return None
    kind, words, language = found
    page = _find_page(folded, words)
    location_start, location_end = _find_location(folded, words)
    if label is None and page is None and location_start is None:
        # Without a date label a line needs a page or a location to count as metadata:
        # "- Note to self" alone is a body line, not a Kindle entry.
        return None
    return kind, language, page, location_start, location_end, added_at, added_raw


def _find_kind(folded_head: str, language: str | None) -> tuple[str, _UiWords, str] | None:
    """The entry kind, the words of the line's UI language, and that language's code."""
    if language is not None and (words := _UI_WORDS.get(language)) is not None:
        for word, kind in words.kinds:
            if word in folded_head:
                return kind, words, language
    # No label, or a line without its label language's words: whichever language's are there.
    for code, words in _UI_WORDS.items():
        for word, kind in words.kinds:
            if word in folded_head:
                return kind, words, language or code
    return None


def _find_page(folded_head: str, words: _UiWords) -> str | None:
    at = folded_head.find(words.page)
    if at < 0:
        return None
    if words.number_before_page:
        match = _PAGE_BEFORE_WORD_RE.search(folded_head, max(0, at - 30), at)
    else:
        match = _PAGE_AFTER_WORD_RE.match(folded_head, at + len(words.page))
    if match is None:
        return None
    page = match["page"]
    if page.isalnum():
        return page
    first, _, last = page.replace(EN_DASH, "-").replace(" ", "").partition("-")
    # PDFs write a one-page highlight as a range: `on page 13-13`.
    return first if first == last else f"{first}-{last}"


def _find_location(folded_head: str, words: _UiWords) -> tuple[int | None, int | None]:
    at = folded_head.find(words.location)
    if at < 0:
        return None, None
    match = _LOCATION_AFTER_WORD_RE.match(folded_head, at + len(words.location))
    if match is None:
        return None, None
    start_digits, end_digits = match.group("start", "end")
    start = int(start_digits)
    if end_digits is None:
        return start, None
    end = int(end_digits)
    if end < start and len(end_digits) < len(start_digits):
        # Kindle 2/3 drop the end's leading digits that it shares with the start:
        # `Loc. 5444-45` is 5444-5445, `Loc. 7203-4` is 7203-7204. When the shared prefix
        # rolls over (`998-02`), the end is in the next hundred.
        prefix = start_digits[: len(start_digits) - len(end_digits)]
        end = int(prefix + end_digits)
        if end < start:
            end += 10 ** len(end_digits)
    return start, end


# --- Dates -----------------------------------------------------------------------------------


def _month_numbers() -> dict[str, int]:
    # One row per month: en, de (and Austrian), es, fr, it, nl, pt, then Russian in the
    # genitive the Kindle writes (`22 августа`) and the nominative.
    rows = [
        "january januar jänner enero janvier gennaio januari janeiro января январь",
        "february februar febrero février febbraio februari fevereiro февраля февраль",
        "march märz marzo mars marzo maart março марта март",
        "april april abril avril aprile april abril апреля апрель",
        "may mai mayo mai maggio mei maio мая май",
        "june juni junio juin giugno juni junho июня июнь",
        "july juli julio juillet luglio juli julho июля июль",
        "august august agosto août agosto augustus agosto августа август",
        "september september septiembre setiembre septembre settembre setembro сентября сентябрь",
        "october oktober octubre octobre ottobre oktober outubro октября октябрь",
        "november november noviembre novembre novembre november novembro ноября ноябрь",
        "december dezember diciembre décembre dicembre december dezembro декабря декабрь",
    ]
    return {name: number for number, row in enumerate(rows, start=1) for name in row.split()}


_MONTHS = _month_numbers()

# A date is a day, then a time, then sometimes a zone. Days repeat from one entry to the
# next (a reader highlights many passages in an evening), so the day is parsed once per
# distinct text and cached, and only the time is read for every entry.

# 24-hour `19:06:11`; 12-hour `9:18:28 AM`, Kindle 2's `09:25 PM` (no seconds), es-419's
# `7:15:38 p. m.`. Matched from two characters before the first colon: `[^0-9]?` takes the
# space before a one-digit hour.
_CLOCK_RE = re.compile(
    r"[^0-9]?(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2}))?"
    r"(?:\s*(?P<half>[AaPp])\.?\s?[Mm]\b\.?)?"
)
# zh `下午6:10:53`, and `上午09时11分28秒` from a Kindle 3 with Chinese dates.
_CJK_CLOCK_RE = re.compile(
    r"(?P<half>上午|下午|午前|午後)?\s*(?P<hour>[0-9]{1,2})\s*[:时]\s*(?P<minute>[0-9]{2})"
    r"(?:\s*[:分]\s*(?P<second>[0-9]{2}))?"
)
# An optional weekday: `Saturday, `, `quinta-feira, `, `jeudi ` (no comma in fr/it/nl).
_WEEKDAY = r"(?:[^\W\d_]+(?:-[^\W\d_]+)?,?\s+)?"
# US: `Monday, January 4, 2016 `; Kindle 2/3: `Saturday, October 31, 2009, `.
_MONTH_DAY_YEAR_RE = re.compile(
    rf"{_WEEKDAY}(?P<month>[^\W\d_]+)\s+(?P<day>[0-9]{{1,2}}),?\s+(?P<year>[0-9]{{4}})\b"
)
# UK `Tuesday, 30 August 2022 `, Kindle 3 UK `Monday, 3 December 12 ` (a two-digit year),
# de `Mittwoch, 14. Juli 2021 ` (and `… 2019 um `), es/pt `jueves, 1 de octubre de 2015 `,
# fr `samedi 16 juin 2012 à `, ru `четверг, 22 августа 2024 г. в `.
_DAY_MONTH_YEAR_RE = re.compile(
    rf"{_WEEKDAY}(?P<day>[0-9]{{1,2}})\.?\s+(?:de\s+)?(?P<month>[^\W\d_]+)\.?\s+(?:de\s+)?"
    rf"(?P<year>[0-9]{{4}}|[0-9]{{2}})\b"
)
# ja `2021年8月3日火曜日 `, zh `2013年12月27日星期五 `.
_CJK_DAY_RE = re.compile(
    r"(?P<year>[0-9]{4})\s*年\s*(?P<month>[0-9]{1,2})\s*月\s*(?P<day>[0-9]{1,2})\s*日"
)
# Kindle 3/4 UK append the zone as free text: `GMT+00:59`, `GMT-02:23`, `Greenwich Mean Time`.
_OFFSET_RE = re.compile(r"(?:GMT|UTC)\s*(?P<sign>[+-])(?P<hours>[0-9]{1,2}):?(?P<minutes>[0-9]{2})")
_PM_HALVES = frozenset({"p", "P", "下午", "午後"})


def _parse_date(raw: str, language: str | None) -> datetime | None:
    """Read a Kindle date in any UI language; naive device time is taken as UTC."""
    if "午" in raw or "时" in raw:
        time = _CJK_CLOCK_RE.search(raw)
    else:
        colon = raw.find(":")
        time = _CLOCK_RE.match(raw, max(0, colon - 2)) if colon > 0 else None
    if time is None:
        return None
    day = _parse_day(raw[: time.start("hour")], language)
    if day is None:
        return None
    hour, minute, seconds, half = time.group("hour", "minute", "second", "half")
    hour_number = int(hour)
    if half:
        # 12-hour clocks write midnight as `12:02:28 AM` and `上午12:12:13`.
        hour_number = hour_number % 12 + (12 if half in _PM_HALVES else 0)
    try:
        added_at = datetime(
            *day, hour_number, int(minute), int(seconds) if seconds else 0, tzinfo=UTC
        )
        if "GMT" in raw or "UTC" in raw:
            offset = _OFFSET_RE.search(raw, time.end())
            if offset is not None:
                delta = timedelta(hours=int(offset["hours"]), minutes=int(offset["minutes"]))
                zone = timezone(delta if offset["sign"] == "+" else -delta)
                added_at = added_at.replace(tzinfo=zone).astimezone(UTC)
    except (ValueError, OverflowError):
        return None  # 31 February, hour 25, a zone offset of 99 hours
    return added_at


@lru_cache(maxsize=1024)
def _parse_day(text: str, language: str | None) -> tuple[int, int, int] | None:
    """Read the day part of a date as (year, month, day); the language picks which order
    (month first or day first) to try first, and both are tried."""
    if "年" in text:
        cjk = _CJK_DAY_RE.match(text)
        if cjk is None:
            return None
        return int(cjk["year"]), int(cjk["month"]), int(cjk["day"])
    first, second = (
        (_MONTH_DAY_YEAR_RE, _DAY_MONTH_YEAR_RE)
        if language in ("en", None)
        else (_DAY_MONTH_YEAR_RE, _MONTH_DAY_YEAR_RE)
    )
    for pattern in (first, second):
        match = pattern.match(text)
        if match is not None and match["month"].casefold() in _MONTHS:
            year = int(match["year"])
            if len(match["year"]) == 2:
                year += 2000  # `Saturday, 29 April 17 21:23:29`: no Kindle predates 2007
            return year, _MONTHS[match["month"].casefold()], int(match["day"])
    return None
