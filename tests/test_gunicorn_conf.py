"""The web server's settings (exogram/gunicorn_conf.py) that `make load` measured."""

from exogram import gunicorn_conf


class ConnectionsTests:
    def test_it_takes_a_connection_only_when_a_thread_is_free(self) -> None:
        # Kept alive, or accepted while every thread is busy, a reader's connection waits
        # on one process while another may idle.
        assert gunicorn_conf.keepalive == 0
        assert gunicorn_conf.worker_connections == gunicorn_conf.threads
