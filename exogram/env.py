"""Typed readers for settings that come from the environment.

Each helper raises ImproperlyConfigured with the variable's name and the bad value, so a
typo in a deployment fails at start-up instead of somewhere deep in a request.
"""

import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}"
    )


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number; got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}; got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}; got {value}")
    return value


def env_float(name: str, default: float, *, low: float, high: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number; got {raw!r}") from None
    if not low <= value <= high:
        raise ImproperlyConfigured(f"{name} must be between {low} and {high}; got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name, "").strip()
    return Path(raw).expanduser().resolve() if raw else default.resolve()


def backups_beside(data_dir: Path) -> Path:
    """`/srv/exogram/var` → `/srv/exogram/var-backups`: beside the data folder, not in it,
    so that `rm -r var` (or moving it) leaves the backups."""
    return data_dir.with_name(f"{data_dir.name}-backups")


def env_backup_dir(name: str, *, data_dir: Path) -> Path | None:
    """A folder for the nightly backups: `off` for none, unset for the one beside the data
    folder (backups_beside), else the folder named (relative to the working folder)."""
    raw = os.environ.get(name, "").strip()
    if raw.casefold() == "off":
        return None
    return env_path(name, backups_beside(data_dir.resolve()))


def env_optional_dir(name: str) -> Path | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    path = Path(raw).expanduser().resolve()
    if not path.is_dir():
        raise ImproperlyConfigured(f"{name} must name an existing folder; {path} is not one")
    return path


def database_from_url(name: str, url: str) -> dict[str, object]:
    """Turn postgres://user:password@host:port/dbname?sslmode=… into Django's DATABASES entry."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ImproperlyConfigured(
            f"{name} must be a postgres:// or postgresql:// URL; got scheme {parts.scheme!r}"
        )
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname:
        raise ImproperlyConfigured(f"{name} must name a database, as in postgres://host/exogram")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"{name} has a bad port in {url!r}") from None
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    # libpq's own spelling for a Unix socket folder: postgres:///exogram?host=/run/postgresql
    host = query.pop("host", "") or unquote(parts.hostname or "")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": dbname,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(port or ""),
        "OPTIONS": query,
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
