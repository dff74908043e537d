"""Embedding highlights: the ONNX encoder and its model loaders (no database), the opt-in
quantized variant, and the pipeline that claims, encodes and writes vectors (the only
module here that touches the database).
"""
