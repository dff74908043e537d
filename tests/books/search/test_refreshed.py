"""A value kept for a while, read again when old or forgotten (books.search.refreshed)."""

from books.search.refreshed import Refreshed


class RefreshedTests:
    def test_it_reads_once_then_again_when_old_or_forgotten(self) -> None:
        clock = [100.0]
        reads: list[int] = []

        def read() -> int:
            reads.append(len(reads))
            return len(reads)

        kept = Refreshed(read, ttl=10.0, clock=lambda: clock[0])
        assert kept.get() == 1
        clock[0] += 9.9
        assert kept.get() == 1  # still fresh
        clock[0] += 0.2
        assert kept.get() == 2  # ten seconds old: read again
        kept.forget()
        assert kept.get() == 3
        assert len(reads) == 3
