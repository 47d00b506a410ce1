"""A CSV file's layout, read from its first bytes and header line only (public): byte-order mark and encoding, the
delimiter, the column names, and an index column to drop. ``privsample.data.table`` reads the records with it.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import numbers
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from privsample.data.cells import WHITESPACE
from privsample.data.read_errors import ENCODING_HINT, error_reason
from privsample.errors import InputError

_SNIFF = 1 << 16  # bytes inspected for a byte-order mark and NUL (binary) content
_HEADER_MAX = 1 << 20  # characters searched for the end of a quoted header line
DELIMITERS = (",", ";", "\t", "|")  # detected from the header line, in this order of preference
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16 BE"),
)
_DUCKDB_ENCODINGS = {"utf-8": "utf-8", "utf-8-sig": "utf-8"}  # read natively (DuckDB's latin-1 refuses 0x80-0x9f)
_JAVA_ENCODINGS = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8",
    "utf-16": "UTF-16",
    "utf-16-le": "UTF-16LE",
    "utf-16-be": "UTF-16BE",
    "iso8859-1": "ISO-8859-1",
    "ascii": "US-ASCII",
}

# DuckDB settings of every connection that reads a table: the IN-list optimizer takes time superlinear in the
# number of columns on the cleaning query (about 25 s for 200 columns and 30 rows; 1 s without it).

IndexCol = str | int | None
"""An index column to drop (``index_col``): its name in the header, or its 1-based position (an int; in text, a
whole number that is not a column name), the way to name a column whose header cell is empty."""

INDEX_HINT = "drop it with --index-col {n} (Python: index_col={n}) or write the file with index=False"


def open_bytes(p: Path):
    return gzip.open(p, "rb") if p.name.lower().endswith(".gz") else open(p, "rb")


# -- CSV layout: delimiter, encoding, header ----------------------------------------------------------
@dataclass(frozen=True)
class CsvLayout:
    """How a CSV file is read: its delimiter, the Python codec that decodes it (``utf-8-sig`` and
    ``utf-16`` skip a byte-order mark), its cleaned column names and the blank lines before the header.
    ``index``: the 0-based position of an index column dropped on reading (``index_col``), not in ``names``."""

    delimiter: str
    encoding: str
    names: tuple[str, ...]
    skip: int
    chosen_by: str = ""  # what chose the encoding (for messages)
    index: int | None = None

    @property
    def scan_names(self) -> tuple[str, ...]:
        """The names of every column of the file, as a reader parses it: ``names`` with the dropped index column
        (under a name none of them has) at its place."""
        if self.index is None:
            return self.names
        return self.names[: self.index] + (index_placeholder(self.names),) + self.names[self.index :]

    @property
    def duckdb_encoding(self) -> str | None:
        """The encoding DuckDB reads the file in, or None when it must be transcoded to UTF-8 first."""
        return _DUCKDB_ENCODINGS.get(self.encoding)

    @property
    def java_encoding(self) -> str:
        """The encoding's Java charset name (for Spark's CSV reader)."""
        return java_encoding(self.encoding)


def java_encoding(encoding: str | None) -> str:
    """Java charset name of a Python codec name (Spark reads CSV with Java's decoders)."""
    name = codecs.lookup(encoding).name if encoding else "utf-8"
    if name in _JAVA_ENCODINGS:
        return _JAVA_ENCODINGS[name]
    if m := re.fullmatch(r"iso8859-(\d+)", name):
        return f"ISO-8859-{m.group(1)}"
    if m := re.fullmatch(r"cp(125\d)", name):
        return f"windows-{m.group(1)}"
    return name


def check_delimiter(delimiter: str | None) -> str | None:
    """A forced delimiter: one character (``tab`` or ``\\t`` for a tab), not a quote or a line break."""
    if delimiter is None:
        return None
    d = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}.get(delimiter.lower(), delimiter)
    if len(d) != 1 or d in '"\r\n':
        raise InputError(f"--delimiter must be one character such as ',', ';', '|' or tab (got {delimiter!r})")
    return d


def check_encoding(encoding: str | None) -> str | None:
    """A forced encoding: the canonical name of a Python text codec."""
    if encoding is None:
        return None
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        info = None
    if info is None or not getattr(info, "_is_text_encoding", True):
        raise InputError(
            f"--encoding {encoding!r} is not a text encoding Python knows (e.g. utf-8, latin-1, cp1252, utf-16)"
        )
    return info.name


def _delimiter_name(d: str) -> str:
    return "tab" if d == "\t" else repr(d)


def _resolve_encoding(head: bytes, encoding: str | None) -> tuple[str, str]:
    """(Python codec, what chose it): a byte-order mark decides, else ``encoding``, else UTF-8."""
    for bom, codec, label in _BOMS:
        if head.startswith(bom):
            return codec, f"its byte-order mark says {label}"
    if encoding is None:
        return "utf-8-sig", "the default"
    return ("utf-8-sig" if encoding == "utf-8" else encoding), f"--encoding {encoding}"


def _utf16_without_bom(head: bytes) -> str | None:
    """'utf-16-le' / 'utf-16-be' when the first line looks like UTF-16 text without a byte-order mark
    (the header's bytes only: the message must not depend on the records)."""
    end = head.find(b"\n")
    sample = head[: min(512, end if end >= 0 else len(head))]
    if len(sample) < 2:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) >= 0.8 * len(odd) and even.count(0) <= 0.2 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.8 * len(even) and odd.count(0) <= 0.2 * len(odd):
        return "utf-16-be"
    return None


def encoding_error(p: Path, encoding: str, why: str) -> InputError:
    label = {"utf-8-sig": "UTF-8", "utf-16": "UTF-16"}.get(encoding, encoding)
    return InputError(f"{p}: not valid {label} text ({why}); {ENCODING_HINT}")


def _header_text(head: bytes, codec: str) -> str:
    """The start of the file up to the end of its header line (blank lines before it included), decoded from the
    first bytes ``head`` with undecodable bytes as U+FFFD: what may be checked before any record is read."""
    text = codecs.getincrementaldecoder(codec)(errors="replace").decode(head, final=len(head) < _SNIFF)
    stream = io.StringIO(text)
    _header_line(stream)
    return text[: stream.tell()]


def _header_line(text) -> str | None:
    """The first non-blank line of ``text`` (continued while a quote is open), or None."""
    blank = WHITESPACE + '"' + "".join(DELIMITERS)
    while line := text.readline():
        while line.count('"') % 2 and len(line) < _HEADER_MAX and (more := text.readline()):
            line += more
        if line.strip(blank):
            return line
    return None


def detect_delimiter(p: Path, line: str) -> str:
    """The one candidate delimiter outside quotes in the header ``line`` (',' if none); refused if several."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in counts:
            counts[ch] += 1
    found = sorted((d for d in DELIMITERS if counts[d]), key=lambda d: -counts[d])  # stable: preference order
    if not found:
        return ","
    if len(found) == 1:
        return found[0]
    splits = ", ".join(f"{counts[d] + 1} columns on {_delimiter_name(d)}" for d in found)
    likely = "tab" if found[0] == "\t" else f"'{found[0]}'"
    raise InputError(
        f"{p}: cannot tell the delimiter from the header ({splits}); the likely one is {likely}: "
        f"pass --delimiter {likely} (or --delimiter with another)"
    )


def csv_layout(
    path: str | Path, delimiter: str | None = None, encoding: str | None = None, index_col: IndexCol = None
) -> CsvLayout:
    """The delimiter, encoding, cleaned column names and blank lines before the header of a CSV file.

    ``delimiter`` / ``encoding`` force them (see the module docstring for detection); ``index_col`` names an
    index column left out of ``names`` (``index_position``). Raises InputError for an empty, binary,
    undecodable or header-less file, an ambiguous delimiter, an empty or duplicate name (``check_header``).
    """
    p = Path(path)
    delimiter, encoding = check_delimiter(delimiter), check_encoding(encoding)
    try:
        with open_bytes(p) as fh:
            head = fh.read(_SNIFF)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{p}: cannot read ({error_reason(exc)})") from None
    if not head:
        raise InputError(f"{p}: the file is empty (no header, no rows)")
    codec, why = _resolve_encoding(head, encoding)
    # Only the header line (and blank lines before it) may refuse the file here: the records are private, and a
    # record that is not valid text is refused later, while reading, by ``malformed_error`` (naming no line).
    lead = _header_text(head, codec)
    if "\x00" in lead:  # (UTF-16 bytes hold NULs: only a decoded NUL counts there)
        utf16 = _utf16_without_bom(head)
        if utf16 and utf16 != encoding:
            raise InputError(f"{p}: looks like UTF-16 text without a byte-order mark: pass --encoding {utf16}")
        raise InputError(f"{p}: looks like a binary file, not CSV text (its header holds NUL bytes)")
    if "\ufffd" in lead:
        raise encoding_error(p, codec, why)
    record: list[str] | None = None
    skip = 0
    try:
        with open_bytes(p) as raw, io.TextIOWrapper(raw, encoding=codec, errors="replace", newline="") as text:
            line = _header_line(text)
            if line is not None and delimiter is None:
                delimiter = detect_delimiter(p, line)
        with open_bytes(p) as raw, io.TextIOWrapper(raw, encoding=codec, errors="replace", newline="") as text:
            reader = csv.reader(text, delimiter=delimiter or ",", quotechar='"', doublequote=True, strict=False)
            for row in reader:
                if any(field.strip(WHITESPACE) for field in row):
                    record = row
                    break
                skip = reader.line_num
    except UnicodeDecodeError:
        raise encoding_error(p, codec, why) from None
    except (csv.Error, OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{p}: cannot parse the CSV header ({error_reason(exc)})") from None
    if record is None:
        raise InputError(f"{p}: no header row (the file has only blank lines)")
    if any("\ufffd" in f for f in record):
        raise encoding_error(p, codec, why)
    index = index_position(p, record, index_col)
    names = check_header(p, record, index)
    return CsvLayout(delimiter or ",", codec, tuple(names), skip, why, index)


def index_position(path: str | Path, fields: Sequence, index_col: IndexCol) -> int | None:
    """The 0-based position in the header ``fields`` of the index column ``index_col`` names (``IndexCol``), or
    None; ``InputError`` when it names none. The header alone decides (column names are public)."""
    if index_col is None:
        return None
    names = [str(f).strip(WHITESPACE) for f in fields]
    position = None
    if isinstance(index_col, str):
        name = index_col.strip(WHITESPACE)
        if name and name in names:
            return names.index(name)
        if name.isdigit():
            position = int(name)
        elif not name:
            raise InputError("--index-col must name a column or give its 1-based position (got an empty name)")
        else:
            shown = ", ".join(repr(n) for n in names[:10]) + (", ..." if len(names) > 10 else "")
            raise InputError(
                f"{path}: --index-col {name!r} is not a column of the header ({shown}); "
                "a column with no name is given by its 1-based position"
            )
    elif isinstance(index_col, numbers.Integral) and not isinstance(index_col, bool):
        position = int(index_col)
    else:
        raise InputError(f"--index-col must be a column name or a 1-based position, not {index_col!r}")
    if not 1 <= position <= len(names):
        raise InputError(f"{path}: --index-col {position} is not a column position of the header (1 to {len(names)})")
    return position - 1


def index_placeholder(names: Sequence[str]) -> str:
    """A column name none of ``names`` has, under which a dropped index column is parsed."""
    name = "privsample_index"
    while name in names:
        name += "_"
    return name


def check_header(path: str | Path, fields: Sequence[str], index: int | None = None) -> list[str]:
    """The column names of a CSV header's ``fields``, without surrounding ``WHITESPACE`` and without the index
    column at 0-based position ``index`` (``index_position``); ``InputError`` for an empty name, naming its
    position (1-based; the first one empty is most often an index column that pandas wrote, and the message says
    how to drop it), or for duplicate names. The header alone is read: column names are public."""
    names = [f.strip(WHITESPACE) for f in fields]
    empty = [i + 1 for i, n in enumerate(names) if not n and i != index]
    if empty:
        where = f"column {empty[0]}" if len(empty) == 1 else f"columns {', '.join(map(str, empty))}"
        hint = f" (an index column written by pandas? {INDEX_HINT.format(n=1)})" if empty[0] == 1 else ""
        raise InputError(f"{path}: {where} of the header {'has' if len(empty) == 1 else 'have'} no name{hint}: "
                         "name every column, or remove the unnamed ones")  # fmt: skip
    names = [n for i, n in enumerate(names) if i != index]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"{path}: duplicate column name(s) in the header: {', '.join(repr(d) for d in dup)}")
    return names
