"""What a database holds, to compare before and after a backup, a restore or a refusal."""

from django.db import connection


def table_rows() -> dict[str, tuple[int, str]]:
    """Each table's row count and a checksum of its rows (in any order)."""
    found = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        for (table,) in cursor.fetchall():
            cursor.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, chr(10) ORDER BY t::text), "
                f"'')) FROM \"{table}\" t"
            )
            found[table] = cursor.fetchone()
    return found
