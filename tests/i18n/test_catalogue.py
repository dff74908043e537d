"""The templates mark every word a reader sees, and the Spanish catalogue translates them all."""

import gettext
import re
from pathlib import Path

from tests.i18n.po_file import po_entries
from tests.i18n.template_text import templates_unmarked, unmarked_text

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "locale" / "es" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")


class TemplateMarkingTests:
    def test_it_finds_no_unmarked_string_in_any_template(self) -> None:
        unmarked = templates_unmarked(ROOT / "templates")
        assert not unmarked, "not marked for translation:\n" + "\n".join(map(str, unmarked))

    def test_it_flags_text_and_visible_attributes(self) -> None:
        source = (
            '<h1>Hello</h1>\n<input placeholder="Your name" aria-label="{{ x }} more">\n'
            "<p>{{ count }} books</p>"
        )
        found = [u.text for u in unmarked_text(source)]
        assert found == ["Hello", "placeholder='Your name'", "aria-label=' more'", "books"]

    def test_it_ignores_marked_text_punctuation_code_and_the_allowlist(self) -> None:
        source = (
            '{% load i18n %}<h1>{% translate "Hello" %} · Exogram</h1>'
            "{% blocktranslate %}Some {{ x }} words{% endblocktranslate %}"
            "<p title=\"{% translate 'Hi' %}\">— {{ name }} ({{ n }}%) &nbsp; ←</p>"
            "<script>const words = 'not for readers';</script>{# a comment #}"
            "{% comment %}Notes for developers{% endcomment %}<!-- markup note -->"
        )
        assert unmarked_text(source) == []


class SpanishCatalogueTests:
    def test_it_translates_every_entry_and_has_none_fuzzy(self) -> None:
        entries = po_entries(PO)
        assert len(entries) > 500
        untranslated = [e.msgid for e in entries if e.untranslated]
        fuzzy = [e.msgid for e in entries if "fuzzy" in e.flags]
        assert untranslated == []
        assert fuzzy == []

    def test_it_keeps_the_placeholders_of_every_message(self) -> None:
        for entry in po_entries(PO):
            for text in entry.msgstr.values():
                for placeholder in ("%(count)d", "%(counter)s", "%(name)s", "%(file)s", "{due}"):
                    if placeholder in entry.msgid:
                        assert placeholder in text, entry.msgid

    def test_it_has_a_compiled_catalogue_that_matches_the_po(self) -> None:
        # The compiled .mo is committed (the server may have no gettext to build it); one
        # older than the .po is one that lacks or misstates a message. Compared by content,
        # since a checkout gives both files the same arbitrary times.
        with MO.open("rb") as compiled:
            catalogue = gettext.GNUTranslations(compiled)
        for entry in po_entries(PO):
            if entry.msgid_plural:
                for n, index in ((1, 0), (2, 1)):
                    if entry.msgctxt:
                        got = catalogue.npgettext(entry.msgctxt, entry.msgid, entry.msgid_plural, n)
                    else:
                        got = catalogue.ngettext(entry.msgid, entry.msgid_plural, n)
                    assert got == entry.msgstr[index], entry.msgid
            elif entry.msgctxt:
                got = catalogue.pgettext(entry.msgctxt, entry.msgid)
                assert got == entry.msgstr[0], entry.msgid
            else:
                assert catalogue.gettext(entry.msgid) == entry.msgstr[0], entry.msgid

    def test_it_never_lets_a_percent_sign_start_a_line(self) -> None:
        # Spanish writes "70 %"; with a plain space a phone's line broke it into "70" over
        # "%". The space after a number is a no-break one.
        spaced = re.compile(r"(\d|%\(\w+\)[sd]) %%")
        broken = [
            entry.msgid
            for entry in po_entries(PO)
            for text in entry.msgstr.values()
            if spaced.search(text)
        ]
        assert broken == []

    def test_it_has_only_entries_for_messages_in_the_sources(self) -> None:
        # Obsolete entries (#~) are what makemessages leaves of a message no longer used.
        assert "\n#~ " not in PO.read_text(encoding="utf-8")

    def test_it_holds_every_message_the_templates_mark(self) -> None:
        # A string marked after the last makemessages would show in English.
        msgids = {entry.msgid for entry in po_entries(PO)}
        literal = re.compile(r"""\{% *translate +(?:"([^"]*)"|'([^']*)')""")
        missing = []
        for template in sorted((ROOT / "templates").rglob("*.*")):
            for match in literal.finditer(template.read_text(encoding="utf-8")):
                text = (match.group(1) or match.group(2) or "").replace("%", "%%")
                if text and text not in msgids:
                    missing.append(f"{template.relative_to(ROOT)}: {text}")
        assert missing == []
