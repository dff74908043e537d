import pytest
from django.dispatch import Signal

from books import events


class AnnounceTests:
    def test_it_refuses_work_that_nobody_sends(self) -> None:
        with pytest.raises(events.NobodyListens):
            events.announce(Signal(), ids=[1])

    @pytest.mark.parametrize(
        "signal", [events.highlights_to_embed, events.import_queued, events.library_map_behind]
    )
    def test_it_has_the_tasks_listening_once_the_app_is_ready(self, signal: Signal) -> None:
        assert signal.has_listeners()

    def test_it_returns_what_each_listener_answers(self) -> None:
        signal = Signal()

        def answer(*, number: int, **kwargs: object) -> int:
            return number + 1

        signal.connect(answer)
        assert events.announce(signal, number=41) == [42]
