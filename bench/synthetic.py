"""A realistic, well-formed `My Clippings.txt`, invented from scratch for benchmarks.

Shaped like a device file: a BOM, CRLF line endings, a BOM at some entry starts, entries
interleaved across books, mostly highlights with some notes and bookmarks, re-highlights
that extend an earlier highlight, exact duplicates a few seconds apart, and metadata lines in
all ten UI languages (old and new firmware). About 300 bytes per entry.
"""

# The generated metadata lines are the Kindle's own, full-width parentheses and Cyrillic
# included.
# ruff: noqa: RUF001

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["make_clippings_file"]

# Invented prose to highlight, by script: words for the alphabetic languages, characters for
# Japanese and Chinese.
_PROSE = {
    "en": "the river kept its own counsel while the lanterns burned low over harbour and hill "
    "every letter she wrote was an argument with the weather memory is a patient cartographer "
    "nobody told the orchard that winter had been cancelled so it bloomed anyway quietly "
    "a theory of small kindnesses begins with the soup and ends with the dishes",
    "es": "el faro guardaba silencio mientras la marea subía despacio sobre las piedras y nadie "
    "recordaba quién había encendido la primera lámpara del pueblo junto al puerto viejo",
    "de": "der Zug kam pünktlich an aber niemand stieg aus weil die Stadt noch schlief und der "
    "Bäcker das Brot für einen anderen Morgen gebacken hatte",
    "ru": "старый маяк молчал пока прилив медленно поднимался над камнями и никто не помнил кто "
    "зажёг первую лампу",
}
_VOCABULARY = {language: prose.split() for language, prose in _PROSE.items()}
_VOCABULARY["pt"] = _VOCABULARY["es"]
_CJK = "海风把旧信吹进抽屉里她数着灯塔的光等待一个不会来的船期夜色很慢记忆很轻"
_KANA = "しずかなあさにとけいのおとだけがへやをめぐっていたわたしはまどをあけてかぜをいれた"

# Invented books, with the title-line shapes the parser meets: `Last, First`, several
# authors with `;`, an edition in the title, nested parentheses, no author at all.
_BOOKS = (
    "The Cartographer of Small Rooms (Okafor, Adaeze)",
    "Lanterns Over Harbour Street (Miriam Vell)",
    "A Patient Orchard: Essays (Tanaka, Ren;Lindqvist, Sofie)",
    "El faro de las horas quietas (Spanish Edition) (Ibarra, Lucía)",
    "Der pünktliche Zug (German Edition) (Brandt, Konrad)",
    "Maré baixa em Lisboa (Fonseca, Helena)",
    "Старый маяк (Андрей Соколов)",
    "静かな朝の時計 (文庫) (佐藤 葵)",
    "海风与旧信（上下） (现代文库) ((加)林远)",
    "Notes on Soup and Dishes (2nd ed.) (Harrow, June)",
    "Field Notes 2019 - Quarterly Review  ",
    "Le jardin d'hiver (Morel, Camille)",
    "Il quaderno blu (Ricci, Paolo)",
    "De stille haven (Jansen, Eva)",
)

_MONTHS = {
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
_WEEKDAYS = {
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
# Roughly how often each UI language shows up in real libraries.
_LANGUAGE_WEIGHTS = {
    "en": 40,
    "es": 12,
    "de": 10,
    "pt": 10,
    "ja": 8,
    "zh": 6,
    "ru": 5,
    "fr": 4,
    "it": 3,
    "nl": 2,
}


@dataclass
class _Highlight:
    book: str
    language: str
    page: int
    start: int
    end: int
    text: str
    added_at: datetime


def make_clippings_file(n: int, *, seed: int = 0) -> bytes:
    """Return `n` entries of a device-like `My Clippings.txt` as UTF-8 bytes (with BOM)."""
    rng = random.Random(seed)
    clock = datetime(2015, 3, 1, 8, 0, 0)
    recent: list[_Highlight] = []
    entries: list[str] = []
    languages = list(_LANGUAGE_WEIGHTS)
    weights = list(_LANGUAGE_WEIGHTS.values())
    for _ in range(n):
        clock += timedelta(seconds=rng.randint(5, 4_000))
        roll = rng.random()
        if recent and roll < 0.03:
            # Re-highlighting the same passage a few seconds later writes it again.
            earlier = rng.choice(recent)
            earlier.added_at = clock
            entries.append(_entry(earlier, "highlight", earlier.text, rng))
            continue
        if recent and roll < 0.06:
            # Extending a highlight appends a new, longer entry; the old one stays.
            earlier = rng.choice(recent)
            earlier.end += rng.randint(1, 3)
            earlier.text = f"{earlier.text} {_sentence(earlier.language, rng, 6)}"
            earlier.added_at = clock
            entries.append(_entry(earlier, "highlight", earlier.text, rng))
            continue
        language = rng.choices(languages, weights)[0]
        start = rng.randint(20, 9_000)
        highlight = _Highlight(
            book=rng.choice(_BOOKS),
            language=language,
            page=start // 14 + 1,
            start=start,
            end=start + rng.randint(0, 4),
            text=_sentence(language, rng, rng.randint(14, 26)),
            added_at=clock,
        )
        if roll < 0.16:
            entries.append(_entry(highlight, "note", _sentence(language, rng, 6), rng))
        elif roll < 0.21:
            entries.append(_entry(highlight, "bookmark", "", rng))
        else:
            entries.append(_entry(highlight, "highlight", highlight.text, rng))
            recent = [*recent[-20:], highlight]
    return ("\ufeff" + "".join(entries)).encode("utf-8")


def _sentence(language: str, rng: random.Random, words: int) -> str:
    if language in ("ja", "zh"):
        alphabet = _KANA if language == "ja" else _CJK
        return "".join(rng.choice(alphabet) for _ in range(words * 2)) + "。"
    vocabulary = _VOCABULARY.get(language, _VOCABULARY["en"])
    text = " ".join(rng.choice(vocabulary) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _entry(highlight: _Highlight, kind: str, text: str, rng: random.Random) -> str:
    # Some firmware writes a BOM at the start of entries, not only at the file start.
    bom = "\ufeff" if rng.random() < 0.1 else ""
    metadata = _metadata_line(highlight, kind, rng)
    return f"{bom}{highlight.book}\r\n{metadata}\r\n\r\n{text}\r\n==========\r\n"


def _metadata_line(highlight: _Highlight, kind: str, rng: random.Random) -> str:
    language = highlight.language
    page, start = highlight.page, highlight.start
    span = f"{start}-{highlight.end}" if kind == "highlight" else f"{start}"
    date = _date(language, highlight.added_at, rng)
    if language == "en":
        noun = {"highlight": "Highlight", "note": "Note", "bookmark": "Bookmark"}[kind]
        if rng.random() < 0.2:  # Kindle 3 era: no "Your", `Loc.`, two spaces before `|`
            return f"- {noun} on Page {page} | Loc. {span}  | Added on {date}"
        return f"- Your {noun} on page {page} | Location {span} | Added on {date}"
    if language == "de":
        noun = {"highlight": "Markierung", "note": "Notiz", "bookmark": "Lesezeichen"}[kind]
        owner = "Ihr" if kind == "bookmark" else "Ihre"
        return f"- {owner} {noun} auf Seite {page} | bei Position {span} | Hinzugefügt am {date}"
    if language == "es":
        article, noun = {
            "highlight": ("La", "subrayado"),
            "note": ("La", "nota"),
            "bookmark": ("El", "marcador"),
        }[kind]
        if rng.random() < 0.5:  # old firmware
            return f"- Tu {noun} en la posición {span} | Añadido el {date}"
        return f"- {article} {noun} en la página {page} | posición {span} | Añadido el {date}"
    if language == "fr":
        noun = {"highlight": "surlignement", "note": "note", "bookmark": "signet"}[kind]
        return f"- Votre {noun} sur la page {page} | emplacement {span} | Ajouté le {date}"
    if language == "it":
        owner, noun = {
            "highlight": ("La tua", "evidenziazione"),
            "note": ("La tua", "nota"),
            "bookmark": ("Il tuo", "segnalibro"),
        }[kind]
        return f"- {owner} {noun} a pagina {page} | posizione {span} | Aggiunto in data {date}"
    if language == "nl":
        noun = {"highlight": "highlight", "note": "notitie", "bookmark": "bladwijzer"}[kind]
        span = span.replace("-", " t/m ")
        return f"- Je {noun} op pagina {page} | locatie {span} | Toegevoegd op {date}"
    if language == "pt":
        owner, noun = {
            "highlight": ("Seu", "destaque"),
            "note": ("Sua", "nota"),
            "bookmark": ("Seu", "marcador"),
        }[kind]
        if rng.random() < 0.5:  # old firmware, with its `ou` typo
            return f"- {owner} {noun} ou posição {span} | Adicionado: {date}"
        return f"- {owner} {noun} na página {page} | posição {span} | Adicionado: {date}"
    if language == "ru":
        noun = {
            "highlight": "Ваш выделенный отрывок",
            "note": "Ваша заметка",
            "bookmark": "Ваша закладка",
        }[kind]
        span = span.replace("-", "\u2013")
        return f"\u2013 {noun} на странице {page} | Место {span} | Добавлено: {date}"
    if language == "ja":
        noun = {"highlight": "ハイライト", "note": "メモ", "bookmark": "ブックマーク"}[kind]
        return f"- {page}ページ|位置No. {span}の{noun} |作成日: {date}"
    noun = {"highlight": "标注", "note": "笔记", "bookmark": "书签"}[kind]
    return f"- 您在第 {page} 页（位置 #{span}）的{noun} | 添加于 {date}"


def _date(language: str, moment: datetime, rng: random.Random) -> str:
    weekday = _WEEKDAYS[language].split()[moment.weekday()]
    clock = f"{moment:%H:%M:%S}"
    if language in ("ja", "zh"):
        day = f"{moment.year}年{moment.month}月{moment.day}日{weekday}"
        if language == "ja":
            return f"{day} {moment.hour}:{moment:%M:%S}"
        half = "上午" if moment.hour < 12 else "下午"
        return f"{day} {half}{(moment.hour - 1) % 12 + 1}:{moment:%M:%S}"
    month = _MONTHS[language].split()[moment.month - 1]
    if language == "en":
        if rng.random() < 0.6:  # US firmware: 12-hour clock, month first
            twelve = (moment.hour - 1) % 12 + 1
            half = "AM" if moment.hour < 12 else "PM"
            return f"{weekday}, {month} {moment.day}, {moment.year} {twelve}:{moment:%M:%S} {half}"
        return f"{weekday}, {moment.day} {month} {moment.year} {clock}"
    if language == "de":
        return f"{weekday}, {moment.day}. {month} {moment.year} {clock}"
    if language in ("es", "pt"):
        return f"{weekday}, {moment.day} de {month} de {moment.year} {clock}"
    if language == "ru":
        return f"{weekday}, {moment.day} {month} {moment.year} г. в {clock}"
    return f"{weekday} {moment.day} {month} {moment.year} {clock}"
