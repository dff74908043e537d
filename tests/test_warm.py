import logging

import pytest

from books.embedding.encoder import _encoder_sets, _encoders, get_encoder
from exogram import gunicorn_conf
from exogram.warm import enabled, warm_up


class _Worker:
    pid = 1234


@pytest.mark.django_db
class WarmUpTests:
    def test_it_loads_the_encoder_templates_and_a_connection(self) -> None:
        _encoders.clear()
        _encoder_sets.clear()
        timings = warm_up()
        assert set(timings) == {"urls", "database", "templates", "encoder", "theme"}
        assert _encoders  # the model is loaded: the first search will not load it
        assert get_encoder() is next(iter(_encoders.values()))
        # And the theme model, which search reads beside it.
        assert next(iter(_encoder_sets.values()))._theme is not None

    def test_the_gunicorn_hook_warms_unless_turned_off(
        self, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        monkeypatch.setenv("EXOGRAM_WARM_WEB", "0")
        assert not enabled()
        with caplog.at_level(logging.INFO, logger="exogram.warm"):
            gunicorn_conf.post_worker_init(_Worker())
        assert "warmed" not in caplog.text
        monkeypatch.setenv("EXOGRAM_WARM_WEB", "1")
        with caplog.at_level(logging.INFO, logger="exogram.warm"):
            gunicorn_conf.post_worker_init(_Worker())
        assert "web process 1234 warmed" in caplog.text
