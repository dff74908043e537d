"""Connect step alone: a 3,000-passage import connected in the pipeline's task groups."""
import json, os, sys, time
import numpy as np
from bench.db import bench_database, setup_django
setup_django()
from django.db import transaction
from accounts.models import User
from books.models import Book, Highlight, Connection
from books.connections.services import connections_forget, highlights_connect
N, GROUP = int(sys.argv[1]), 256
rng = np.random.default_rng(7)
words = [f"w{''.join(rng.choice(list('abcdefghij'), 6))}" for _ in range(3000)]
def unit(v): return (v / np.linalg.norm(v)).astype(np.float32).tolist()
with bench_database("exogram_bench_judge_connect"):
    reader = User.objects.create_user("connect")
    books = [Book.objects.create(reader=reader, title=f"B{i}", key=f"b{i}", authors=f"A{i%30}", authors_normalized=f"a{i%30}") for i in range(60)]
    centres = rng.normal(size=(80, 384)); centres2 = rng.normal(size=(80, 384))
    rows = []
    for n in range(N):
        t = n % 80
        english = n % 3 != 0
        rows.append(Highlight(reader=reader, book=books[n % 60], dedupe_key=str(n),
            text=" ".join(rng.choice(words, 18)) + ".", language="en" if english else "es",
            embedding=unit(centres[t] + 0.9 * rng.normal(size=384)),
            english_embedding=unit(centres2[t] + 0.9 * rng.normal(size=384)) if english else None,
            embedding_model="bench@0", embedding_status="pending"))
    Highlight.objects.bulk_create(rows, batch_size=500)
    ids = list(Highlight.objects.filter(reader=reader).order_by("pk").values_list("pk", flat=True))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    groups = []
    for start in range(0, N, GROUP):
        batch = ids[start:start+GROUP]
        g0 = time.process_time()
        with transaction.atomic():
            Highlight.objects.filter(pk__in=batch).update(embedding_status="done")
            connections_forget(ids=batch)
            highlights_connect(ids=batch)
        groups.append(time.process_time() - g0)
    print(json.dumps({"passages": N, "python_cpu_s": round(time.process_time() - cpu0, 2),
        "wall_s": round(time.perf_counter() - wall0, 2), "group_cpu_p50_s": round(float(np.median(groups)), 3),
        "pairs": Connection.objects.count(), "load": os.getloadavg()}))
