"""One module per paper for ``benchmarks/paper_claims.py``: ``page(results_dir) -> list[str]`` returns the markdown
page (title, the claims table, notes) built from the paper's transcribed claims and the stored CSVs."""
