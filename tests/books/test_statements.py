"""One statement under settings of its own, in one round trip, on real PostgreSQL."""

import pytest
from django.db import connection

from books.statements import execute_with_settings


@pytest.mark.django_db(transaction=True)
class ExecuteWithSettingsTests:
    def test_it_runs_the_statement_under_its_settings_alone(self) -> None:
        with connection.cursor() as cursor:
            execute_with_settings(
                cursor,
                {"max_parallel_workers_per_gather": 0, "hnsw.ef_search": 77},
                "SELECT current_setting('max_parallel_workers_per_gather'), "
                "current_setting('hnsw.ef_search'), %s",
                ["mine"],
            )
            assert cursor.fetchall() == [("0", "77", "mine")]
            cursor.execute("SELECT current_setting('max_parallel_workers_per_gather')")
            assert cursor.fetchall() != [("0",)]
