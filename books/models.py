import uuid
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import models
from django.db.models.expressions import Expression
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex, VectorField

from books.import_records import Import as Import
from books.import_records import ImportSaving as ImportSaving
from books.import_records import ImportUpload as ImportUpload
from books.import_records import LeftOut as LeftOut
from books.import_records import percent_step as percent_step
from books.import_records import percent_under_way as percent_under_way
from books.importing.identity import display_authors, highlight_dedupe_key
from books.places import location_span
from books.text import search_fold, title_initial, title_sort_key

EMBEDDING_DIMENSIONS = 384
# The theme model's vectors (books.embedding.theme.THEME_DIMENSIONS).
THEME_DIMENSIONS = 512
# The languages whose stems keyword search matches ("habits" finds "habit", "muertes"
# finds "muerte"): PostgreSQL's built-in snowball configurations, present on any server.
SEARCH_STEM_CONFIGS = ("english", "spanish")


def search_document() -> Expression:
    """The tsvector keyword search reads: the folded words as written (`simple`: exact words
    and phrases), then their English and Spanish stems. The GIN index is built on this very
    expression, and a query must use it to read the index."""
    document: Expression = SearchVector("search_text", config="simple")
    for config in SEARCH_STEM_CONFIGS:
        document = document + SearchVector("search_text", config=config)
    return document


class BookQuerySet(models.QuerySet["Book"]):
    """Bulk writes keep each book's sort key in step with its title, as Book.save does."""

    def bulk_create(self, objs: Iterable["Book"], *args: Any, **kwargs: Any) -> list["Book"]:
        books = list(objs)
        for book in books:
            book.title_sort = title_sort_key(book.title)
        return super().bulk_create(books, *args, **kwargs)

    def bulk_update(
        self, objs: Iterable["Book"], fields: Iterable[str], batch_size: int | None = None
    ) -> int:
        books, names = list(objs), list(fields)
        if "title" in names:
            for book in books:
                book.title_sort = title_sort_key(book.title)
            names.append("title_sort")
        return super().bulk_update(books, names, batch_size=batch_size)


class Book(models.Model):
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="books"
    )
    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    title = models.CharField(max_length=1000)
    authors = models.CharField(max_length=1000, blank=True, help_text="As written in the source.")
    authors_normalized = models.CharField(max_length=1000, blank=True)
    # Normalized title + authors: the same book from two files (or two devices) is one book.
    key = models.CharField(max_length=600)
    # The title as lists sort it (books.text.title_sort_key: no leading article, accents
    # and case folded, numbers by value), kept in step with `title` by save() and the
    # queryset's bulk writes, so that lists of highlights by book sort and page in the
    # database. "C": byte order, the order Python gives the same keys on every server.
    title_sort = models.TextField(blank=True, editable=False, db_collation="C")
    created = models.DateTimeField(auto_now_add=True)

    objects = BookQuerySet.as_manager()

    class Meta:
        ordering = ["title_sort", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["reader", "key"], name="book_unique_key_per_reader"),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.authors_display})" if self.authors_display else self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The sort key is the title's shadow, not a rule of its own: every save of the
        # title writes it too (a save of named fields that names the title included).
        self.title_sort = title_sort_key(self.title)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "title" in update_fields:
            kwargs["update_fields"] = {*update_fields, "title_sort"}
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("book", args=[self.code])

    @property
    def authors_display(self) -> str:
        """The authors as pages and reading exports show them (`Nir Eyal;` reads `Nir
        Eyal`); `authors` keeps the field as the file wrote it, for the JSON export."""
        return display_authors(self.authors)

    @property
    def initial(self) -> str:
        """The letter of the book's tile: where the title order files it (no article)."""
        return title_initial(self.title)

    @property
    def cover_tint(self) -> int:
        """One of 12 cover colours (CSS classes, not an inline style: the site's CSP)."""
        return (self.pk or 0) % 12


class BookAlias(models.Model):
    """A book the reader merged into another ("This is the same book as…"), known again by
    its key: a later import of its title and author lands in `book` instead of bringing the
    merged-away copy back (books.importing.reader_books.clippings_follow_merges), and its
    old code leads to `book` (a second POST of the merge, an old link)."""

    reader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The merged-away book's Book.key and code, as they were.
    key = models.CharField(max_length=600)
    code = models.UUIDField()
    title = models.CharField(max_length=1000)
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="aliases")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["reader", "key"], name="book_alias_unique_key"),
        ]
        indexes = [
            # The merge view finds a merged-away book by its old code.
            models.Index(fields=["reader", "code"], name="book_alias_reader_code"),
        ]

    def __str__(self) -> str:
        return f"{self.title} → {self.book_id}"


class Tag(models.Model):
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tags"
    )
    name = models.CharField(max_length=64)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["reader", "name"], name="tag_unique_name_per_reader"),
        ]

    def __str__(self) -> str:
        return self.name


# What no list of highlights shows: the vector (1.5 kB, 384 numbers parsed a row: 0.18 ms
# each, 2 ms for a highlight page's twelve nearest passages), the folded copy for search,
# the import's and the pipeline's bookkeeping.
UNLISTED_FIELDS = (
    "embedding", "english_embedding", "theme_embedding", "search_text", "embedding_error",
    "dedupe_key", "added_raw", "file_tags",
)  # fmt: skip


# The longest note a reader can write (the pages, the review, the API and the MCP server).
NOTE_MAX_LENGTH = 10_000


class HighlightQuerySet(models.QuerySet["Highlight"]):
    def alive(self) -> "HighlightQuerySet":
        return self.filter(deleted_at__isnull=True)

    def deleted_since(self, the_import: "Import") -> "HighlightQuerySet":
        """Those an import added that were deleted since, however. Not those it kept
        deleted (an Exogram export's, deleted in the account it came from before the import
        began): bringing them back undoes the reader's own delete there."""
        return self.filter(source_import=the_import, deleted_at__gte=the_import.started_at)

    def listed(self) -> "HighlightQuerySet":
        """Without UNLISTED_FIELDS: for pages that list highlights (a deferred field read
        later costs a query per row)."""
        return self.defer(*UNLISTED_FIELDS)

    def passages(self) -> "HighlightQuerySet":
        """Highlights that carry an idea: not the reader's words (books.vocabulary). What
        connections, the map and search by meaning rank; words stay findable by keyword."""
        return self.filter(is_word=False)

    def words(self) -> "HighlightQuerySet":
        """The reader's words: highlights too short to carry an idea, with some text."""
        return self.filter(is_word=True, kind=Highlight.Kind.HIGHLIGHT).exclude(text="")

    def embedded_with(self, model_id: str) -> "HighlightQuerySet":
        return self.filter(
            embedding_status=Highlight.EmbeddingStatus.DONE, embedding_model=model_id
        )


class Highlight(models.Model):
    class Kind(models.TextChoices):
        HIGHLIGHT = "highlight", _("Highlight")
        NOTE = "note", _("Standalone note")

    class EmbeddingStatus(models.TextChoices):
        PENDING = "pending", _("Pending")
        CLAIMED = "claimed", _("Being embedded")
        DONE = "done", _("Embedded")
        FAILED = "failed", _("Failed")

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="highlights"
    )
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="highlights")
    # The import that first brought this highlight in: its report's progress and counts.
    source_import = models.ForeignKey(
        "Import", null=True, blank=True, on_delete=models.SET_NULL, related_name="highlights"
    )
    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.HIGHLIGHT)
    text = models.TextField(blank=True)
    note = models.TextField(blank=True, help_text="The reader's own note on this highlight.")
    # Set when the reader edits the note here: a re-import then never overwrites it.
    note_edited = models.BooleanField(default=False)
    # When the reader last edited it here; None for a note edited in another account and
    # brought by its Exogram export (or edited before this was kept, on an imported row
    # untouched since its import): "Delete what this import added" spares only a highlight
    # whose note was edited after the import.
    note_edited_at = models.DateTimeField(null=True, blank=True)
    # When the device wrote the note: an edited note (a newer entry) replaces an older one.
    note_added_at = models.DateTimeField(null=True, blank=True)
    page = models.CharField(max_length=32, blank=True)
    location_start = models.PositiveIntegerField(null=True, blank=True)
    location_end = models.PositiveIntegerField(null=True, blank=True)
    # Where a KOReader, Kobo or Apple Books highlight is in the book's markup, for finding a
    # later version of it (books.importing.positions); "" for the Kindle's, which has locations.
    position = models.CharField(max_length=500, blank=True, default="", db_default="")
    # The order of highlights without locations (positions.reading_key): the device's
    # position step by step as numbers, else the page as a number; "" for the Kindle's.
    reading_key = models.CharField(
        max_length=300, blank=True, default="", db_default="", db_collation="C"
    )
    added_at = models.DateTimeField(null=True, blank=True)
    added_raw = models.CharField(max_length=200, blank=True)
    # Stable across imports: book + location range + normalized text (dedupe_key_from_fields).
    dedupe_key = models.CharField(max_length=64)
    # Soft delete: a deleted highlight leaves every read path at once, and the dedupe key
    # stays so that a re-import does not bring it back.
    deleted_at = models.DateTimeField(null=True, blank=True)
    # The delete of a whole book or of what an import added that took it (None: deleted on
    # its own, or before deletes were recorded): /deleted/ lists and brings them back as one.
    deletion = models.ForeignKey(
        "Deletion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="highlights",
        db_index=False,  # the partial index highlight_deletion
    )
    favourite = models.BooleanField(default=False)
    # Too short to carry an idea (books.vocabulary): a word or short phrase looked up while
    # reading, listed as the reader's words, a note of a few words ("tutaj", "aaa"), or a
    # book's heading however long ("CHAPTER SEVEN: THE POWER OF HABIT AND THE BRAIN"):
    # never connected, never ranked by meaning. Set wherever the text is set.
    is_word = models.BooleanField(default=False)
    # "en", "es", "de", "pt", "fr", "it" or "unknown" (books.language): the pair judge
    # weighs a pair by its two languages. Set wherever the text is set, like is_word.
    language = models.CharField(max_length=16, default="unknown", db_default="unknown")
    tags = models.ManyToManyField(Tag, blank=True, related_name="highlights")
    # The tags (as tag names) that the last file listing this highlight's tags named for it
    # (a Readwise CSV's column, an Exogram export's list): an import adds only those its
    # file names anew, so a tag the reader deleted or renamed stays so (books.importing.
    # enrich). Null until such a file lists them (for a highlight imported before this was
    # kept, the next one: all its tags are added, once).
    file_tags = models.JSONField(null=True, blank=True)
    # From formats that carry them (a Kindle notebook's section and heading path, a
    # highlight's colour). A database default too: the import's COPY does not name them.
    chapter = models.CharField(max_length=500, blank=True, default="", db_default="")
    colour = models.CharField(max_length=32, blank=True, default="", db_default="")
    # Accent- and case-folded text + note, for keyword search (see books.text.fold);
    # refreshed by refresh_search_text() whenever those change. Never the book's title or
    # authors: they are fields, matched as such, or every highlight of "A Death in the
    # Family" would match "death".
    search_text = models.TextField(blank=True, editable=False)

    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    # An English passage's vector from the English model (books.embedding.english), which
    # judges its connections with other English passages; null for every other highlight,
    # and whenever the model judges every pair itself.
    english_embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    # A passage's or note's vector from the theme model (books.embedding.theme): candidates
    # of connections are sought by it too, and the pair judge reads its cosine; null for the
    # reader's words, and with a model that has none beside it.
    theme_embedding = VectorField(dimensions=THEME_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True)
    embedding_status = models.CharField(
        max_length=16, choices=EmbeddingStatus.choices, default=EmbeddingStatus.PENDING
    )
    embedding_claimed_at = models.DateTimeField(null=True, blank=True)
    # Which process holds the claim ("host:pid"): a worker starting on the same host hands
    # out at once the claims of a process that is gone, instead of waiting out the lease.
    embedding_claimed_by = models.CharField(max_length=200, blank=True, db_default="")
    # When a task for this highlight was last sent: the sweep leaves it alone while that
    # task is likely still queued (books.embedding.pipeline.QUEUED_LEASE).
    embedding_enqueued_at = models.DateTimeField(null=True, blank=True)
    # Why it is not embedded yet, or, once embedded, what was left out of its vector.
    embedding_error = models.TextField(blank=True)

    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = HighlightQuerySet.as_manager()

    class Meta:
        ordering = ["book", "location_start", "reading_key", "created"]
        constraints = [
            models.UniqueConstraint(
                fields=["reader", "dedupe_key"], name="highlight_unique_dedupe_key_per_reader"
            ),
            models.CheckConstraint(
                condition=models.Q(location_end__isnull=True)
                | models.Q(location_start__isnull=True)
                | models.Q(location_end__gte=models.F("location_start")),
                name="highlight_location_range_ordered",
            ),
        ]
        indexes = [
            # Nearest neighbours by cosine distance (connections, search by meaning).
            # The opclass must match CosineDistance (<=>) or the index is never used.
            # ef_construction 128, not pgvector's 64: recall under the reader filter (see
            # books.connections.neighbours and migration 0005).
            HnswIndex(
                name="highlight_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
            ),
            # Nearest English passages by the English model (connections of a large
            # library; a small one is compared in memory). Only English passages have one.
            HnswIndex(
                name="highlight_english_hnsw",
                fields=["english_embedding"],
                m=16,
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
                condition=models.Q(english_embedding__isnull=False),
            ),
            # Nearest passages by the theme model: connections' candidates in a large library.
            HnswIndex(
                name="highlight_theme_hnsw",
                fields=["theme_embedding"],
                m=16,
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
                condition=models.Q(theme_embedding__isnull=False),
            ),
            # A reader's library: counts on the home page, exact scans of small libraries.
            models.Index(fields=["reader"], name="highlight_reader"),
            # A book page: the reader's highlights of one book in reading order.
            models.Index(fields=["reader", "book"], name="highlight_reader_book"),
            # The reader's words (/words/, a book's words), in book order.
            models.Index(
                fields=["reader", "book", "location_start"],
                name="highlight_reader_words",
                condition=models.Q(is_word=True),
            ),
            # The bin: a reader's deleted highlights, latest first (/deleted/), and the
            # daily purge's readers and batches (books.purging). Partial: only the deleted.
            models.Index(
                fields=["reader", "-deleted_at"],
                name="highlight_deleted",
                condition=models.Q(deleted_at__isnull=False),
            ),
            # The highlights one delete took (bringing them back, a group on /deleted/).
            models.Index(
                fields=["deletion"],
                name="highlight_deletion",
                condition=models.Q(deletion__isnull=False),
            ),
            # Keyword search: words as written and their stems (search_document()), so
            # the query must use search_document() to read it.
            GinIndex(search_document(), name="highlight_search_stems_gin"),
            # The embedding pipeline: pending and stuck-claimed highlights.
            models.Index(
                fields=["embedding_status", "embedding_claimed_at"],
                name="highlight_embedding_queue",
                condition=~models.Q(embedding_status="done"),
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80] or self.note[:80]

    def get_absolute_url(self) -> str:
        return reverse("highlight", args=[self.code])

    @property
    def word_language(self) -> str:
        """The language one of the reader's words is read in: its book's where a list read it
        (books.selectors.book_languages), else its own. One word alone seldom tells its
        language."""
        return getattr(self, "book_language", "") or self.language

    @property
    def word_kind(self) -> str:
        """For one of the reader's words: "look-up", "heading" or "fragment" (books.vocabulary)."""
        from books.vocabulary import word_kind

        return word_kind(self.text, language=self.word_language)

    @property
    def word_as_written(self) -> str:
        """For a word looked up: the word as the deck and the lists show it, without the
        punctuation the selection caught ("largess," is "largess")."""
        from books.vocabulary import word_as_written

        # "s'mores" in an English book keeps its "s'".
        return word_as_written(self.text, language=self.word_language)

    @property
    def word_key(self) -> str:
        """For one of the reader's words: the word it is to the deck and the lists, one for
        every highlight of it ("l'esprit" and "d'esprit" in a French book: "esprit")."""
        from books.vocabulary import word_key

        return word_key(self.text, language=self.word_language)

    @property
    def word_as_listed(self) -> str:
        """For one of the reader's words in a list of them: a word looked up as the deck
        shows it (word_as_written); a heading or a piece of a sentence as the reader
        highlighted it ("What Is to Be Done?", "C++")."""
        from books.vocabulary import WordKind

        if self.word_kind != WordKind.LOOK_UP:
            return self.text
        return self.word_as_written

    def dedupe_key_from_fields(self, *, book_key: str | None = None) -> str:
        """The dedupe key its own kind, place and words give under `book_key` (its book's
        key when None): what `dedupe_key` holds, unless it was stepped aside from another
        highlight's (the import's `_free_key`) or the book's key has changed since."""
        return highlight_dedupe_key(
            book_key=self.book.key if book_key is None else book_key,
            kind=self.kind,
            page=self.page,
            start=self.location_start,
            end=self.location_end,
            text=self.text,
        )

    def refresh_is_word(self) -> None:
        from books.vocabulary import is_heading, is_vocabulary

        # Notes too: on a real library, standalone notes such as "tutaj" and "tu koniec"
        # were the top "same idea" pairs of /connections/. Only highlights are listed as
        # words (HighlightQuerySet.words). A heading is a book's, never a note's: a note the
        # reader typed in capitals is their thought, and connects.
        heading = self.kind == self.Kind.HIGHLIGHT and is_heading(self.text)
        self.is_word = heading or is_vocabulary(self.text)

    def refresh_language(self) -> None:
        from books.language import language_of

        self.language = language_of(self.text)

    def refresh_search_text(self) -> None:
        self.search_text = search_text_of(self.text, self.note)

    def refresh_reading_key(self) -> None:
        from books.importing.positions import reading_key

        self.reading_key = reading_key(self.position, self.page)


def search_text_of(text: str, note: str) -> str:
    return search_fold(" ".join(part for part in (text, note) if part))


# A note with no text, which imports made of a note the reader closed empty before they
# skipped it (books.importing.reader_books.is_empty_note): nothing to show, read or count,
# and no image highlight either. Rows some libraries still hold: left out wherever
# highlights are counted (a book's page, its delete and bring back, the library), so that
# every count agrees.
EMPTY_NOTE = models.Q(kind=Highlight.Kind.NOTE, text="", note="")


class Deletion(models.Model):
    """One delete of many highlights at once: a whole book, or what an import added
    (books.deleting). Its highlights point at it while they stay deleted."""

    class Kind(models.TextChoices):
        BOOK = "book", _("A book")
        IMPORT = "import", _("What an import added")

    reader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # What was deleted; None once the book or the import itself is gone.
    book = models.ForeignKey(
        Book, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_import = models.ForeignKey(
        Import, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.kind} deleted at {self.at:%Y-%m-%d %H:%M}"


class PurgedHighlight(models.Model):
    """What is kept of a highlight removed for good (books.purging): enough for an import
    to know it again and leave it out (books.importing.purged), never its words. Hashes of
    its texts and 4-word runs, not the text: "removed for good" holds for what it said."""

    reader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The book's key (Book.key): the book itself goes with its last highlight.
    book_key = models.CharField(max_length=600)
    kind = models.CharField(max_length=16, choices=Highlight.Kind.choices)
    dedupe_key = models.CharField(max_length=64)
    # books.importing.purged.text_hash of its text, of every entry merged into it and of
    # its note ("note:" first).
    text_hashes = ArrayField(models.CharField(max_length=40), default=list)
    # books.importing.purged.runs of its text: a shorter selection of it is found by them.
    runs = ArrayField(models.BigIntegerField(), default=list)
    purged_at = models.DateTimeField(auto_now_add=True)
    # A highlight the reader deleted on the device (books.importing.device_deleted), not
    # here: a live copy of it in an older file is left out, one made after it is new.
    on_device = models.BooleanField(default=False)
    # When the device says the deleted highlight was made; None when it does not say.
    added_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # An import reads those of the books in its file.
            models.Index(fields=["reader", "book_key"], name="purged_reader_book"),
        ]

    def __str__(self) -> str:
        return f"purged {self.kind} {self.dedupe_key[:12]}"

    def filed_under(self, book_key: str) -> "PurgedHighlight":
        """A copy of this trace under another key of its book (an alias, the book an entry
        of "Untitled" now belongs to), unsaved: an import reads the traces of its books'
        keys."""
        return PurgedHighlight(
            reader_id=self.reader_id,
            book_key=book_key,
            kind=self.kind,
            dedupe_key=self.dedupe_key,
            text_hashes=self.text_hashes,
            runs=self.runs,
            on_device=self.on_device,
            added_at=self.added_at,
        )


class HighlightMerge(models.Model):
    """A clipping an import merged into a highlight: another version of the same passage.

    In one file, the earlier, shorter selections are the versions recorded (the longest
    holds them all); from a later import, the entry that extended the stored highlight.

    The import report lists them, so a reader can see that nothing was lost: each row is
    one entry of the file, its text as the Kindle wrote it, and the highlight that now
    holds every word of it.
    """

    class How(models.TextChoices):
        EXTENDED = "extended", _("Extended")
        OVERLAPPED = "overlapped", _("Re-selected")
        PAGE_TURN = "page_turn", _("Joined at a page turn")
        CONTAINED = "contained", _("Contained in a longer highlight")

    reader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source_import = models.ForeignKey(Import, on_delete=models.CASCADE, related_name="merges")
    highlight = models.ForeignKey(Highlight, on_delete=models.CASCADE, related_name="merges")
    how = models.CharField(max_length=16, choices=How.choices)
    merged_text = models.TextField(help_text="The merged entry's text, as written in the file.")
    where = models.CharField(max_length=64, blank=True, help_text="Its location or page.")
    added_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The import report's list of merges, in the order they were made.
            models.Index(fields=["source_import", "id"], name="merge_import"),
        ]

    def __str__(self) -> str:
        return f"{self.how}: {self.merged_text[:60]}"

    @property
    def place(self) -> str:
        """`where` in the reader's language: it is stored as "location 210-212" or "page 5"."""
        kind, _, number = self.where.partition(" ")
        if kind == "location" and number:
            start, _, end = number.partition("-")
            return gettext("location %(number)s") % {"number": location_span(start, end)}
        if kind == "page" and number:
            return gettext("page %(number)s") % {"number": number}
        return self.where


class Connection(models.Model):
    """Two highlights of one reader, from different books: a candidate pair and the pair
    judge's verdict on it (books.connections.judge), stored when written.

    `strength` is the band of the judge's probabilities: *same idea*, *related* (the
    reader's connections) or *nearby* (kept so that a highlight with no connection shows the
    judge's best candidates, with what it thinks of them). Reads filter on it; a new judge
    version re-judges the stored pairs in the background (`judge_version`). Words
    (Highlight.is_word) are never connected.

    Stored once per pair, the lower highlight id first, so "each pair once" is a
    constraint and not a promise of the code that writes them. The pair's two books are
    stored beside it (`book_low`, `book_high`: the lower id first), so that the library
    page's "at most three pairs of two books" reads a few rows of each pair of books from
    an index instead of ranking every stored pair; a merge of books moves them
    (books.connections.services.connections_follow_books).
    """

    class Strength(models.IntegerChoices):
        NEARBY = 0, "nearby"
        RELATED = 1, "related"
        SAME_IDEA = 2, "same idea"

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="connections"
    )
    highlight_a = models.ForeignKey(Highlight, on_delete=models.CASCADE, related_name="+")
    highlight_b = models.ForeignKey(Highlight, on_delete=models.CASCADE, related_name="+")
    book_low = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="+")
    book_high = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="+")
    distance = models.FloatField(help_text="Cosine distance by the main model's vectors.")
    probability = models.FloatField(
        default=0.0, help_text="The judge's probability that a reader calls the pair related."
    )
    same_probability = models.FloatField(
        default=0.0, help_text="The judge's probability that the two say the same idea."
    )
    strength = models.PositiveSmallIntegerField(choices=Strength.choices, default=Strength.NEARBY)
    judge_version = models.PositiveIntegerField(
        default=0, help_text="The version of the pair judge's weights that judged the pair."
    )
    wording_shared = models.FloatField(
        null=True,
        blank=True,
        help_text="The share of their words the two passages have in common (1 for one passage "
        "quoted in two books); empty until measured.",
    )
    embedding_model = models.CharField(max_length=100)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["highlight_a", "highlight_b"], name="connection_unique_pair"
            ),
            models.CheckConstraint(
                condition=models.Q(highlight_a__lt=models.F("highlight_b")),
                name="connection_pair_ordered",
            ),
            # Two books: a pair within one book is never a connection.
            models.CheckConstraint(
                condition=models.Q(book_low__lt=models.F("book_high")),
                name="connection_books_ordered",
            ),
        ]
        indexes = [
            # The library connections page: a reader's connections, most probable first.
            models.Index(
                fields=["reader", "strength", "-probability"], name="connection_reader_strength"
            ),
            # The home feed: a reader's newest.
            models.Index(fields=["reader", "-created"], name="connection_reader_created"),
            # One highlight's pairs when it is the second of the pair (the first side is
            # served by the unique constraint's index).
            models.Index(fields=["highlight_b", "strength"], name="connection_b_strength"),
            # The library page: each pair of books' best few (selectors.library_connections).
            models.Index(
                "reader",
                "book_low",
                "book_high",
                models.F("probability").desc(),
                "id",
                name="connection_book_pair",
                condition=models.Q(strength__gte=1),  # related or the same idea
            ),
            # Re-judging after a new judge version.
            models.Index(fields=["judge_version"], name="connection_judge_version"),
        ]

    def __str__(self) -> str:
        return f"{self.highlight_a_id} ~ {self.highlight_b_id} ({self.probability:.2f})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # One pair saved alone (the admin, a test) takes its books from its highlights;
        # the connections' writer sets them for thousands at once.
        if self.book_low_id is None or self.book_high_id is None:
            books = sorted((self.highlight_a.book_id, self.highlight_b.book_id))
            self.book_low_id, self.book_high_id = books
        super().save(*args, **kwargs)

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


class LibraryMap(models.Model):
    """A reader's highlights projected to 2-D, cached until their library changes."""

    reader = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="library_map"
    )
    # What the map was computed from (count, last change, model); a mismatch recomputes.
    signature = models.CharField(max_length=200)
    # {"x": [...], "y": [...], "book": [...], "code": [...]}: integer positions in
    # [0, books.library_map.services.SCALE], a book index and the highlight's code a point.
    points = models.JSONField(default=dict)
    # [{"title", "authors", "colour", "count"}], indexed by the points' "book".
    books = models.JSONField(default=list)
    # Named regions: [{"x", "y", "size", "label"}].
    regions = models.JSONField(default=list)
    # Set when a layout is queued, cleared when it lands: one layout at a time per reader.
    refreshing_since = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"map of {self.reader} ({len(self.points.get('code', []))} points)"
