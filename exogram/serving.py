"""The web server's connection layer: an event loop holds the sockets, threads run Django.

gunicorn's threaded worker gave each connection a thread from the moment its first byte
arrived until its request was read: eight clients sending their headers a byte at a time
held every thread of `make run` (2 processes x 4 threads), and /healthz went unanswered
for as long as they kept sending. Here each gunicorn process runs one asyncio loop
(uvicorn's HTTP/1.1 protocol) that reads every request head and body, with deadlines, and
only a complete request reaches one of the process's WEB_THREADS threads, which run
Django's WSGI application exactly as before (persistent database connections, the same
middleware). Holding a connection open costs a socket and a few kilobytes, not a thread.

- A request head not complete within HEAD_TIMEOUT seconds of the connection (or of the
  previous response) ends the connection.
- A body that stops arriving for BODY_IDLE_TIMEOUT seconds ends it too; a body declared
  larger than the upload limit is not read at all (Django's RequestSizeLimitMiddleware
  answers 413 from the declared length); bodies are spooled to a temporary file past
  FILE_UPLOAD_MAX_MEMORY_SIZE.
- A response is sent chunk by chunk with back-pressure: a streamed export never sits whole
  in memory, and a client that stops reading for SEND_TIMEOUT seconds is dropped.
- The access log names the path without its query string (searches are the reader's).
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

with warnings.catch_warnings():
    # The module warns that it moves to the uvicorn-worker package; the class is the same.
    warnings.simplefilter("ignore", DeprecationWarning)
    from uvicorn.workers import UvicornWorker

access_logger = logging.getLogger("exogram.access")

HEAD_TIMEOUT = 10.0
BODY_IDLE_TIMEOUT = 30.0
SEND_TIMEOUT = 60.0
BODY_CHUNK = 64 * 1024


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request head is late."""

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        waiting_for_head = self.conn.their_state is h11.IDLE
        if waiting_for_head and self._head_timer is None:
            # The first byte of a kept-alive connection's next request: uvicorn has just
            # cancelled its keep-alive timer, and nothing else would bound this head.
            self._arm_head_timer()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._cancel_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


class ExogramWorker(UvicornWorker):
    """A gunicorn worker: one event loop for the sockets, Django on a pool of threads."""

    CONFIG_KWARGS = {
        "loop": "asyncio",
        "http": HeaderTimeoutProtocol,
        "interface": "asgi3",
        "lifespan": "off",
        # Django decides which forwarded headers to trust (TRUST_X_FORWARDED_*).
        "proxy_headers": False,
        "access_log": False,
        "server_header": False,
    }


class WSGIOnThreads:
    """An ASGI application that runs a WSGI application on a fixed pool of threads."""

    def __init__(
        self, wsgi: Callable[..., Iterable[bytes]], *, threads: int, keep_alive: bool
    ) -> None:
        self.wsgi = wsgi
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="web")
        self.keep_alive = keep_alive

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope["headers"]:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]},{value}" if name in headers else value
        with tempfile.SpooledTemporaryFile(max_size=_spool_size()) as body:
            complete = await _read_body(receive, body, headers)
            if complete is None:
                return  # the client went away or stalled: nobody to answer
            body.seek(0)
            environ = _environ(scope, headers, body, complete)
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self.executor, self._respond, environ, send, loop)

    def _respond(self, environ: dict[str, Any], send: Any, loop: asyncio.AbstractEventLoop) -> None:
        started = time.monotonic()
        status_line = ["500"]
        sent_start = [False]
        pending_start: list[dict[str, Any]] = []

        def deliver(message: dict[str, Any]) -> None:
            # Waits for the loop to take the chunk (and for the socket to drain past its
            # high-water mark): back-pressure, so memory stays at one chunk.
            asyncio.run_coroutine_threadsafe(send(message), loop).result(SEND_TIMEOUT)

        def start_response(
            status: str, response_headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Callable[[bytes], None]:
            status_line[0] = status.split(" ", 1)[0]
            encoded = [
                (name.lower().encode("latin-1"), value.strip().encode("latin-1"))
                for name, value in response_headers
            ]
            if not self.keep_alive:
                # Said, so that a client never sends a next request on this connection.
                encoded.append((b"connection", b"close"))
            pending_start[:] = [
                {"type": "http.response.start", "status": int(status_line[0]), "headers": encoded}
            ]
            return lambda data: None  # the legacy write(); Django never uses it

        def body_chunk(data: bytes) -> None:
            if not sent_start[0]:
                deliver(pending_start[0])
                sent_start[0] = True
            if data:
                deliver({"type": "http.response.body", "body": data, "more_body": True})

        result = self.wsgi(environ, start_response)
        try:
            for chunk in result:
                body_chunk(chunk)
            body_chunk(b"")
            deliver({"type": "http.response.body", "body": b"", "more_body": False})
        except (FutureTimeout, OSError, RuntimeError) as error:
            access_logger.info("response abandoned (%s): %s", type(error).__name__, error)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()  # Django's request_finished: the database connection is tidied here
            access_logger.info(
                '%s "%s %s" %s %.0fms',
                environ.get("REMOTE_ADDR", "-"),
                environ["REQUEST_METHOD"],
                environ["PATH_INFO"],  # never the query string
                status_line[0],
                (time.monotonic() - started) * 1000,
            )


def _spool_size() -> int:
    from django.conf import settings

    size: int = settings.FILE_UPLOAD_MAX_MEMORY_SIZE
    return size


def _body_limit() -> int:
    from exogram.middleware import request_size_limit

    return request_size_limit()


async def _read_body(receive: Any, body: Any, headers: dict[str, str]) -> bool | None:
    """True when the whole body was read; False when it was left unread (declared too large
    or grew past the limit: Django answers 413); None when the client left or stalled."""
    try:
        declared = int(headers.get("content-length") or 0)
    except ValueError:
        declared = 0
    if declared > _body_limit():
        return False
    limit = _body_limit()
    size = 0
    more = True
    while more:
        try:
            message = await asyncio.wait_for(receive(), BODY_IDLE_TIMEOUT)
        except TimeoutError:
            return None
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return False
        body.write(chunk)
        more = message.get("more_body", False)
    return True


def _environ(
    scope: dict[str, Any], headers: dict[str, str], body: Any, complete: bool
) -> dict[str, Any]:
    path = scope["path"].encode("utf-8").decode("latin-1")
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": scope["query_string"].decode("latin-1"),
        "SERVER_NAME": server[0],
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "REMOTE_ADDR": client[0] if client else "",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": _WSGIErrors(),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for name, value in headers.items():
        key = name.upper().replace("-", "_")
        if key not in {"CONTENT_LENGTH", "CONTENT_TYPE"}:
            key = f"HTTP_{key}"
        environ[key] = value
    if complete:
        # A chunked body was read whole; Django reads CONTENT_LENGTH bytes of it.
        body.seek(0, 2)
        environ["CONTENT_LENGTH"] = str(body.tell())
        body.seek(0)
    else:
        # Left unread: RequestSizeLimitMiddleware answers 413 from this length.
        environ["CONTENT_LENGTH"] = str(max(int(headers.get("content-length") or 0), 0))
        if int(environ["CONTENT_LENGTH"]) <= _body_limit():
            environ["CONTENT_LENGTH"] = str(_body_limit() + 1)
        body.truncate(0)
    return environ


class _WSGIErrors:
    _lock = threading.Lock()

    def write(self, text: str) -> None:
        with self._lock:
            logging.getLogger("exogram.wsgi").error(text.rstrip())

    def flush(self) -> None:
        pass


def application_for(*, threads: int, keep_alive: bool) -> WSGIOnThreads:
    from django.core.wsgi import get_wsgi_application

    return WSGIOnThreads(get_wsgi_application(), threads=threads, keep_alive=keep_alive)
