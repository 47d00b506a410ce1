"""Write a corpus of small hostile input tables into a directory (``python tests/corpus/make_corpus.py DIR``).

Each entry is a file (or a directory) that a user may really pass to a command that reads a table: empty,
header only, odd names and values, each delimiter and encoding, compressed, Parquet, too wide, too many
categories. ``make_corpus(directory)`` returns, per entry, what a command that reads it correctly sees.
``tests/test_corpus.py`` runs every CLI command that reads a table on every entry.
"""

from __future__ import annotations

import gzip
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Entry:
    """A corpus entry: its file name and the column names a correct reading gives (None: no table to read)."""

    name: str
    columns: list[str] | None
    numeric: list[str] = field(default_factory=list)  # columns holding only numbers (and missing values)
    binary: bool = False  # every value is 0 or 1
    must_read: bool = False  # a correct reader gives a table (exit 0), not a refusal
    note: str = ""


def _rows(header: list[str], rows: list[list[object]], sep: str = ",") -> str:
    def cell(v: object) -> str:
        s = "" if v is None else str(v)
        if any(ch in s for ch in (sep, '"', "\n", "\r")):
            s = '"' + s.replace('"', '""') + '"'
        return s

    return "".join(sep.join(cell(v) for v in r) + "\n" for r in [header, *rows])


def _basic(n: int = 40) -> tuple[list[str], list[list[object]]]:
    """A plain table: a category, an integer, a 0/1 flag."""
    colours = ["red", "green", "blue"]
    return ["colour", "size", "flag"], [[colours[i % 3], i % 7, i % 2] for i in range(n)]


def make_corpus(directory: str | Path) -> dict[str, Entry]:
    """Write the corpus into ``directory`` (created if needed); return {entry name: Entry}."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    entries: list[Entry] = []

    def text(name: str, content: str, columns, encoding: str = "utf-8", **kw) -> None:
        (d / name).write_bytes(content.encode(encoding))
        entries.append(Entry(name, columns, **kw))

    header, rows = _basic()
    text("empty.csv", "", None)
    text("header_only.csv", "a,b,c\n", ["a", "b", "c"])
    text("one_row.csv", _rows(header, rows[:1]), header, numeric=["size", "flag"], must_read=True)
    text("one_column.csv", _rows(["size"], [[i % 5] for i in range(40)]), ["size"], numeric=["size"], must_read=True)
    text("duplicate_names.csv", _rows(["a", "b", "a"], [[1, 2, 3]] * 10), None, note="duplicate column names")
    text("index_column.csv", _rows(["", *header], [[i, *r] for i, r in enumerate(rows)]), None, note="pandas index")
    text("empty_name.csv", _rows(["a", " ", "b"], [[1, 2, 3]] * 10), None, note="an empty column name")
    uni = ["名前", "città", "emoji 😀", "Ελληνικά"]
    text(
        "unicode.csv",
        _rows(uni, [["東京" if i % 2 else "大阪", "Zürich", "🎉" * (1 + i % 3), "αβγ"] for i in range(40)]),
        uni,
        must_read=True,
    )
    text(
        "quoted.csv",
        _rows(["text", "n"], [[f'a, "quoted" value\nover two lines {i % 3}', i % 4] for i in range(40)]),
        ["text", "n"],
        numeric=["n"],
        must_read=True,
    )
    special = ["inf", "-inf", "NaN", "1e308", "-1e308", "1.5", "2", "", "3"]
    text(
        "special_numbers.csv",
        _rows(["x", "y"], [[special[i % len(special)], i % 3] for i in range(45)]),
        ["x", "y"],
        must_read=True,
    )
    text(
        "huge_numbers.csv",
        _rows(["big", "k"], [[i, i % 3] for i in range(40)] + [["1e308", 1], ["-1e308", 2]]),
        ["big", "k"],
        numeric=["big", "k"],
        must_read=True,
        note="bounds at the float limit",
    )
    text(
        "mixed.csv",
        _rows(["mixed", "k"], [[i if i % 3 else f"t{i % 2}", i % 2] for i in range(40)]),
        ["mixed", "k"],
        must_read=True,
    )
    text("all_missing.csv", _rows(["empty", "k"], [[None, i % 3] for i in range(40)]), ["empty", "k"], must_read=True)
    text(
        "constant.csv",
        _rows(["same", "num", "k"], [["x", 7, i % 3] for i in range(40)]),
        ["same", "num", "k"],
        numeric=["num", "k"],
        must_read=True,
    )
    text(
        "many_categories.csv",
        _rows(["id", "k"], [[f"cat{i:05d}", i % 3] for i in range(10_000)]),
        ["id", "k"],
        numeric=["k"],
        must_read=True,
    )
    wide = [f"c{j:03d}" for j in range(200)]
    text(
        "wide.csv",
        _rows(wide, [[(i + j) % 2 for j in range(200)] for i in range(30)]),
        wide,
        numeric=wide,
        binary=True,
        must_read=True,
    )
    for name, sep in (("semicolon.csv", ";"), ("tab.csv", "\t"), ("pipe.csv", "|")):
        text(
            name,
            _rows(header, rows, sep=sep),
            header,
            numeric=["size", "flag"],
            must_read=True,
            note=f"delimiter {sep!r}",
        )
    text("comma.csv", _rows(header, rows), header, numeric=["size", "flag"], must_read=True)
    text("bom.csv", "\ufeff" + _rows(header, rows), header, numeric=["size", "flag"], must_read=True)
    text(
        "utf16.csv",
        "\ufeff" + _rows(header, rows),
        header,
        encoding="utf-16-le",
        numeric=["size", "flag"],
        must_read=True,
        note="UTF-16 with a BOM",
    )
    latin = ["café", "größe"]
    text(
        "latin1.csv",
        _rows(latin, [["crème" if i % 2 else "brûlée", i % 4] for i in range(40)]),
        latin,
        encoding="latin-1",
        numeric=["größe"],
        note="latin-1 (needs --encoding)",
    )
    with gzip.open(d / "gzipped.csv.gz", "wb") as fh:
        fh.write(_rows(header, rows).encode())
    entries.append(Entry("gzipped.csv.gz", header, numeric=["size", "flag"], must_read=True))
    import pandas as pd

    pd.DataFrame(rows, columns=header).to_parquet(d / "table.parquet", index=False)
    entries.append(Entry("table.parquet", header, numeric=["size", "flag"], must_read=True))
    (d / "a_directory.csv").mkdir(exist_ok=True)
    entries.append(Entry("a_directory.csv", None, note="a directory"))
    text("unreadable.csv", _rows(header, rows), None, note="no read permission")
    (d / "unreadable.csv").chmod(0)
    return {e.name: e for e in entries}


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "corpus")
    for e in make_corpus(out).values():
        print(f"{e.name}: {e.columns if e.columns is not None else '(no table)'}")
