"""The application the web server runs (exogram/gunicorn_conf.py): Django's WSGI
application on WEB_THREADS threads behind an event loop that holds the connections
(exogram/serving.py)."""

import os

from exogram.serving import application_for

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")

application = application_for(
    threads=int(os.environ.get("WEB_THREADS", "4")),
    keep_alive=int(os.environ.get("WEB_KEEPALIVE", "0")) > 0,
)
