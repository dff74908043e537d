from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0017_english_embedding"),
    ]

    # pgvector stores a vector EXTERNAL: a row past ~2 kB (a vector is 1.5 kB, an English
    # passage has two) moves it to the TOAST table, and every exact sort or re-check then
    # fetches each vector through the TOAST index (~4 µs a row: a named author's 6,667
    # highlights among 100,000 cost 94 ms of CPU to sort by meaning, 56 with the vectors in
    # the row). MAIN keeps them in the row unless the row cannot fit on a page; the long
    # text is moved out first. Rows written before keep their vectors where they are until
    # they are written again (a library with the English model re-embeds once anyway).
    operations = [
        migrations.RunSQL(
            "ALTER TABLE books_highlight ALTER COLUMN embedding SET STORAGE MAIN, "
            "ALTER COLUMN english_embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE books_highlight ALTER COLUMN embedding SET STORAGE "
            "EXTERNAL, ALTER COLUMN english_embedding SET STORAGE EXTERNAL",
        ),
    ]
