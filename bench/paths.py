"""Where the benchmarks find the evaluation data: read at run time, never copied in."""

import os
from pathlib import Path

# The team's shared folder sits beside the checkout: ../shared/data/eval.
EVAL_DIR = Path(
    os.environ.get("EXOGRAM_EVAL_DIR")
    or Path(__file__).resolve().parents[2] / "shared" / "data" / "eval"
)
