"""`python -m modelbuild FAMILY SOURCE TARGET`: build the folder of the built-in model FAMILY
(the name its vectors carry) from SOURCE into TARGET. The one entry point the runtime uses
(books.embedding.folders, in a child process); a failure ends with one line saying why."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from books.embedding.profiles import E5, MINILM


def _builders() -> dict[str, Callable[[Path, Path], None]]:
    # Each builder is imported only when asked for: e5's needs onnx and sentencepiece.
    def e5(source: Path, target: Path) -> None:
        from modelbuild.e5 import write_model_folder

        write_model_folder(source, target)

    def minilm(source: Path, target: Path) -> None:
        from modelbuild.minilm import write_model_folder

        write_model_folder(source, target)

    return {E5.name: e5, MINILM.name: minilm}


def main(arguments: list[str]) -> int:
    builders = _builders()
    if len(arguments) != 3 or arguments[0] not in builders:
        sys.stderr.write(f"usage: python -m modelbuild {{{','.join(builders)}}} SOURCE TARGET\n")
        return 2
    family, source, target = arguments
    try:
        builders[family](Path(source), Path(target))
    except (OSError, ValueError) as error:  # E5FileError and MiniLMFileError are ValueErrors
        sys.stderr.write(f"{error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
