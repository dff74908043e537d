"""A reader's highlights written out: Markdown (Obsidian), Readwise CSV, Exogram JSON."""
