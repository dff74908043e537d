"""The web server's settings (exogram/gunicorn_conf.py) that `make load` measured."""

from exogram import gunicorn_conf


class ConnectionsTests:
    def test_it_closes_each_connection_after_its_response(self) -> None:
        # Kept alive, a reader's connection stays with the process that accepted it, which
        # may be busy while another idles.
        assert gunicorn_conf.keepalive == 0

    def test_it_holds_connections_on_an_event_loop_and_runs_django_on_threads(self) -> None:
        # A slow client holds a socket, never a thread (tests/test_serving.py).
        assert gunicorn_conf.worker_class == "exogram.serving.ExogramWorker"
        assert gunicorn_conf.wsgi_app == "exogram.asgi:application"
