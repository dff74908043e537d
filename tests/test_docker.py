"""docker/: the compose file and the image agree with `make run` and with the settings.

Compose cannot run here, so its file is read: the services, the environment each gets, the
volumes behind the folders that environment names, the commands and the health checks.
"""

import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from django.urls import resolve

from backups import heartbeat
from exogram import run
from exogram.run import worker_command

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DOCKER / "docker-compose.yml").read_text())
    return loaded


def _documented() -> set[str]:
    text = (DOCKER / ".env.example").read_text()
    return set(re.findall(r"^([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


def _read_by_settings() -> set[str]:
    sources = [ROOT / "exogram" / "settings.py", ROOT / "exogram" / "gunicorn_conf.py"]
    text = "\n".join(path.read_text() for path in sources)
    return set(re.findall(r'(?:env_\w+|environ\.get)\(\s*"([A-Z][A-Z0-9_]+)"', text))


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """Mount point -> volume name."""
    return {
        volume.split(":")[1]: volume.split(":")[0]
        for volume in service.get("volumes", [])
        if ":" in volume
    }


class ComposeTests:
    def test_it_has_the_database_the_broker_and_exogram_s_processes(
        self, compose: dict[str, Any]
    ) -> None:
        assert set(compose["services"]) == {"db", "redis", "migrate", "web", "worker"}
        for name in ("migrate", "web", "worker"):
            assert compose["services"][name]["build"]["dockerfile"] == "docker/Dockerfile"
        migrate = compose["services"]["migrate"]
        assert migrate["depends_on"]["db"]["condition"] == "service_healthy"
        assert migrate["depends_on"]["redis"]["condition"] == "service_healthy"
        # The others start once the migrations have run, so after a healthy db and broker.
        for name in ("web", "worker"):
            waits = compose["services"][name]["depends_on"]["migrate"]["condition"]
            assert waits == "service_completed_successfully"

    def test_every_variable_it_sets_is_one_the_settings_read_and_documented(
        self, compose: dict[str, Any]
    ) -> None:
        read, documented = _read_by_settings(), _documented()
        for name in ("migrate", "web", "worker"):
            environment = compose["services"][name]["environment"]
            assert set(environment) <= read, set(environment) - read
            assert set(environment) <= documented, set(environment) - documented
        assert {
            "EXOGRAM_BACKUP_DIR",
            "EXOGRAM_BACKUP_HOUR",
            "EXOGRAM_BACKUP_KEEP_DAILY",
            "EXOGRAM_BACKUP_KEEP_WEEKLY",
        } <= read & documented

    def test_its_urls_name_its_own_services_and_credentials(self, compose: dict[str, Any]) -> None:
        services = compose["services"]
        environment = services["web"]["environment"]
        database = urlsplit(environment["DATABASE_URL"])
        db = services["db"]["environment"]
        assert (database.hostname, database.port) == ("db", 5432)
        assert (database.username, database.password) == (
            db["POSTGRES_USER"],
            db["POSTGRES_PASSWORD"],
        )
        assert database.path == f"/{db['POSTGRES_DB']}"
        for key in ("CELERY_BROKER_URL", "CACHE_URL"):
            assert urlsplit(environment[key]).hostname == "redis"
        assert environment["CELERY_BROKER_URL"] != environment["CACHE_URL"]

    def test_the_folders_it_names_are_volumes_that_outlive_the_containers(
        self, compose: dict[str, Any]
    ) -> None:
        for name in ("web", "worker"):
            service = compose["services"][name]
            mounts = _mounts(service)
            for variable in ("EXOGRAM_DATA_DIR", "EXOGRAM_BACKUP_DIR"):
                folder = _default(service["environment"][variable])
                assert mounts.get(folder) in compose["volumes"], (name, variable)
        assert _mounts(compose["services"]["worker"])["/backups"] == "exogram-backups"
        dockerfile = (DOCKER / "Dockerfile").read_text()
        # Made in the image and owned by its user, so a new volume starts writable.
        assert "mkdir /data /backups && chown exogram /data /backups" in dockerfile

    def test_the_worker_runs_as_make_run_runs_it_with_its_beat(
        self, compose: dict[str, Any]
    ) -> None:
        worker = compose["services"]["worker"]
        command = worker["command"]
        data_dir = Path(worker["environment"]["EXOGRAM_DATA_DIR"])
        expected = worker_command(data_dir)
        # The same program and flags; the concurrency is left to Celery (one per core).
        concurrency = expected.index("--concurrency")
        del expected[concurrency : concurrency + 2]
        assert command == expected

    def test_a_stopped_worker_has_time_to_finish_its_task_and_say_it_stopped(
        self, compose: dict[str, Any]
    ) -> None:
        # Docker's default grace is 10 s: a worker in an embedding turn was killed before it
        # could record its stop. At least make run's wait, and the stop's own write.
        grace = compose["services"]["worker"]["stop_grace_period"]
        assert grace.endswith("s")
        assert int(grace[:-1]) >= run.STOP_WAIT_SECONDS + heartbeat.STOP_WAIT_SECONDS

    def test_the_database_is_pinned_to_a_major_with_pgvector_and_the_same_memory(
        self, compose: dict[str, Any]
    ) -> None:
        db = compose["services"]["db"]
        image, tag = db["image"].split(":")
        assert image == "pgvector/pgvector"
        # A floating major would upgrade the data volume by surprise (PostgreSQL refuses to
        # start on a folder of another major), so the tag names one.
        major = re.fullmatch(r"(?:\d+\.\d+\.\d+-)?pg(\d+)", tag)
        assert major is not None
        assert int(major.group(1)) >= 15
        settings_source = (ROOT / "exogram" / "settings.py").read_text()
        default = re.search(r'env_str\("EXOGRAM_PG_SHARED_BUFFERS", "(\w+)"\)', settings_source)
        assert default is not None
        assert f"shared_buffers={default.group(1)}" in db["command"]

    def test_every_long_running_service_has_a_health_check(self, compose: dict[str, Any]) -> None:
        services = compose["services"]
        assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
        assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
        # The worker answers a ping under Celery's default node name, the one it runs with.
        ping = services["worker"]["healthcheck"]["test"][1]
        assert "celery -A exogram inspect ping -d celery@$$HOSTNAME" in ping
        assert "--hostname" not in services["worker"]["command"]


class ImageTests:
    def test_its_health_check_asks_the_health_view_on_the_port_it_serves(self) -> None:
        dockerfile = (DOCKER / "Dockerfile").read_text()
        check = re.search(r"HEALTHCHECK .*?CMD (.+?)\n(?!\s)", dockerfile, flags=re.DOTALL)
        assert check is not None
        url = re.search(r"http://127\.0\.0\.1:(\d+)(/\S*?)['\"]", check.group(1))
        assert url is not None
        port, path = url.groups()
        assert resolve(path).url_name == "healthz"
        command = re.search(r"^CMD (\[.*?\])\s*$", dockerfile, flags=re.MULTILINE | re.DOTALL)
        assert command is not None
        assert f"0.0.0.0:{port}" in command.group(1)
        assert f"EXPOSE {port}" in dockerfile

    def test_it_installs_every_package_the_project_declares(self) -> None:
        dockerfile = (DOCKER / "Dockerfile").read_text()
        pyproject = (ROOT / "pyproject.toml").read_text()
        declared = re.search(r"include = \[(.*?)\]", pyproject)
        assert declared is not None
        for package in re.findall(r'"(\w+)\*"', declared.group(1)):
            assert f"COPY {package} ./{package}" in dockerfile, package

    def test_its_web_process_uses_the_same_gunicorn_settings_as_make_run(self) -> None:
        dockerfile = (DOCKER / "Dockerfile").read_text()
        run = (ROOT / "exogram" / "run.py").read_text()
        assert '"--config", "python:exogram.gunicorn_conf"' in dockerfile
        assert '"python:exogram.gunicorn_conf"' in run
        assert shlex.split("--error-logfile -")[0] in dockerfile


def _default(value: str) -> str:
    """A compose value as it reads with docker/.env's variable unset: `${NAME:-x}` is x."""
    found = re.fullmatch(r"\$\{\w+:-(.*)\}", value)
    return found.group(1) if found else value
