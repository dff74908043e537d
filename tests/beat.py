"""The worker's beat schedule as settings build it from an environment (a fresh process)."""

import json
import os
import subprocess
import sys

from tests.worker import ROOT


def beat_schedule(**env: str) -> dict[str, object]:
    """Each scheduled task's name and its schedule as Celery writes it, under `env`."""
    code = (
        "import django, json; django.setup(); from django.conf import settings; "
        "print(json.dumps({k: str(v['schedule']) for k, v in "
        "settings.CELERY_BEAT_SCHEDULE.items()}))"
    )
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "exogram.settings", **env}
    for name in ("EXOGRAM_BACKUP_DIR", "EXOGRAM_DELETED_DAYS"):
        if name not in env:
            environment.pop(name, None)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True,
        text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    schedule: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return schedule
