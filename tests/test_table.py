"""Reading CSV files: the delimiter from the header line, the encoding from a byte-order mark or --encoding."""

from __future__ import annotations

import codecs
import re
import gzip

import pytest

from privsample.data.table import read_table, table_columns
from privsample.data.csv_layout import check_delimiter, check_encoding, csv_layout
from privsample.errors import DataError, InputError

ROWS = "1;2,5;x\n3;4;y\n"


def write(tmp_path, data: bytes | str, name: str = "t.csv"):
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


@pytest.mark.parametrize(
    "text, delimiter, names",
    [
        ("a;b;c\n" + ROWS, ";", ["a", "b", "c"]),
        ("a\tb\tc\n1\t2,5\tx\n", "\t", ["a", "b", "c"]),
        ("a|b|c\n1|2;5|x\n", "|", ["a", "b", "c"]),
        ('a,b,c\n1,"2;5",x\n', ",", ["a", "b", "c"]),
        ('"a;b",c\n1,2\n', ",", ["a;b", "c"]),  # delimiters inside quotes do not count
        ('"a\nb";c\n1;2\n', ";", ["a\nb", "c"]),  # a quoted name may span lines
        ("value\n1;2\n3|4\n", ",", ["value"]),  # one column: the data lines never change the choice
        ("\n\n;;\n a ; b \n1;2\n", ";", ["a", "b"]),  # blank lines (also of delimiters) before the header
        ("a;b\r\n1;2\r\n", ";", ["a", "b"]),
    ],
)
def test_delimiter_is_read_off_the_header_line(tmp_path, text, delimiter, names):
    p = write(tmp_path, text)
    layout = csv_layout(p)
    assert layout.delimiter == delimiter and list(layout.names) == names
    df = read_table(p)
    assert list(df.columns) == names


def test_data_lines_do_not_change_the_choice(tmp_path):
    """The choice is a function of the header alone: records full of other delimiters change nothing."""
    a = read_table(write(tmp_path, "a;b\n1;2\n", "a.csv"))
    b = read_table(write(tmp_path, "a;b\n1,|\t;2\n", "b.csv"))
    assert list(a.columns) == list(b.columns) == ["a", "b"] and b["a"].tolist() == ["1,|"]


@pytest.mark.parametrize(
    "header, message",
    [
        ("name;price,eur;qty", "(3 columns on ';', 2 columns on ','); the likely one is ';': pass --delimiter ';'"),
        ("a,b\tc", "(2 columns on ',', 2 columns on tab); the likely one is ','"),
        ("a\tb\tc|d", "the likely one is tab: pass --delimiter tab"),
    ],
)
def test_an_ambiguous_header_is_refused_naming_the_likely_delimiter(tmp_path, header, message):
    p = write(tmp_path, f"{header}\nsecret1;secret2\n")
    with pytest.raises(InputError) as err:
        read_table(p)
    text = str(err.value)
    assert "cannot tell the delimiter from the header" in text and message in text
    assert "secret" not in text and "\n" not in text


def test_a_forced_delimiter(tmp_path):
    p = write(tmp_path, "name;price,eur;qty\n1;2,3;4\n")
    assert list(read_table(p, delimiter=";").columns) == ["name", "price,eur", "qty"]
    assert list(read_table(p, delimiter=",").columns) == ["name;price", "eur;qty"]
    t = write(tmp_path, "a\tb,c\n1\t2\n", "t.txt")
    for d in ("\t", "tab", "TAB", "\\t"):
        assert list(read_table(t, delimiter=d).columns) == ["a", "b,c"]
    assert check_delimiter(None) is None and check_delimiter("semicolon") == ";"
    for bad in ("", ";;", '"', "\n", "\r"):
        with pytest.raises(InputError, match="--delimiter must be one character"):
            check_delimiter(bad)


TEXT = "größe;name\n1;Müller\n2;Ødegård\n"
EXPECTED = {"größe": ["1", "2"], "name": ["Müller", "Ødegård"]}


@pytest.mark.parametrize(
    "data, kw",
    [
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), {}),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), {}),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), {}),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), {"encoding": "latin-1"}),  # the mark decides
        (TEXT.encode("utf-16-le"), {"encoding": "utf-16-le"}),
        (TEXT.encode("latin-1"), {"encoding": "latin-1"}),
        (TEXT.encode("cp1252"), {"encoding": "cp1252"}),
        (TEXT.encode("utf-8"), {"encoding": "UTF8"}),
    ],
)
@pytest.mark.parametrize("gz", [False, True])
def test_encodings(tmp_path, data, kw, gz):
    p = write(tmp_path, gzip.compress(data) if gz else data, "t.csv.gz" if gz else "t.csv")
    assert read_table(p, **kw).to_dict("list") == EXPECTED
    assert table_columns(p, **kw) == ["größe", "name"]


def test_latin1_reads_every_byte(tmp_path):
    p = write(tmp_path, b"a,b\n\x80\x9f\xff,x\n")  # DuckDB's own latin-1 reader refuses 0x80-0x9f
    assert read_table(p, encoding="latin-1")["a"].tolist() == ["\x80\x9f\xff"]
    assert read_table(p, encoding="cp1252")["a"].tolist() == ["€Ÿÿ"]


@pytest.mark.parametrize(
    "data, kw, fragment",
    [
        ("a;b\n1;Müller\n".encode("latin-1"), {}, "not valid UTF-8 text; pass --encoding"),
        (b"a;b\n" + b"1;x\n" * 30000 + "1;Müller\n".encode("latin-1"), {}, "not valid UTF-8 text"),  # past the sniff
        (
            codecs.BOM_UTF16_LE + "a;b\n1;x\n".encode("utf-16-le") + b"\x00\xd8",
            {},
            "not valid UTF-16 text (its byte-order mark says UTF-16 LE)",
        ),  # an unpaired surrogate
        (
            "a;b\n1;\u20ac\n".encode("utf-8") + b"\x81",
            {"encoding": "cp1252"},
            "not valid cp1252 text (--encoding cp1252)",
        ),
    ],
)
def test_a_file_not_valid_in_its_encoding_is_one_line_without_bytes_or_lines(tmp_path, data, kw, fragment):
    """A record not valid in the encoding is found while reading: the refusal (a DataError, charged to a budget
    file) names no line and no bytes; the reader's description is kept in ``detail`` for ``check``."""
    p = write(tmp_path, data)
    with pytest.raises(DataError) as err:
        read_table(p, **kw)
    text = str(err.value)
    assert "not a well-formed CSV table" in text and "--encoding" in text and "\n" not in text
    assert "ller" not in text and "\\x" not in text and not re.search(r"\d", text.replace(str(p), ""))
    assert fragment in err.value.detail


def test_utf16_without_a_mark_and_bad_encodings(tmp_path):
    p = write(tmp_path, "colour,size\nred,1\n".encode("utf-16-be"))
    with pytest.raises(InputError, match="looks like UTF-16 text without a byte-order mark: pass --encoding utf-16-be"):
        read_table(p)
    assert read_table(p, encoding="utf-16-be").to_dict("list") == {"colour": ["red"], "size": ["1"]}
    with pytest.raises(InputError, match="binary"):
        read_table(write(tmp_path, b"PK\x03\x04\x14\x00\x00\x00\x08\x00\n\x00", "b.csv"))
    with pytest.raises(InputError, match="not valid UTF-8 text"):  # decided by the first line alone
        read_table(write(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "b.csv"))
    assert check_encoding(None) is None and check_encoding("Latin-1") == "iso8859-1"
    for bad in ("klingon", "base64", "rot13"):
        with pytest.raises(InputError, match="is not a text encoding"):
            check_encoding(bad)


def test_no_copy_is_left_behind(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    p = write(tmp_path, codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"))
    assert read_table(p).to_dict("list") == EXPECTED
    bad = write(tmp_path, codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le") + b"\x00\xd8", "bad.csv")
    with pytest.raises(InputError):
        read_table(bad)
    assert not list((tmp_path / "tmp").iterdir())


def test_a_temporary_directory_is_made_only_for_a_copy(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    assert read_table(write(tmp_path, "a;b\n1;2\n")).to_dict("list") == {"a": ["1"], "b": ["2"]}
    p = write(tmp_path, codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "u.csv")
    with pytest.raises(InputError, match="cannot create a temporary directory for a UTF-8 copy"):
        read_table(p)


def test_a_reader_stopped_by_ctrl_c_is_an_interrupt_not_bad_input():
    """DuckDB turns Ctrl-C during a query into InterruptException; reading must not report it as a bad file
    (exit 2) but stop as interrupted (KeyboardInterrupt: the CLI exits 130)."""
    import duckdb

    from privsample.data.table import duckdb_input_error

    with pytest.raises(KeyboardInterrupt):
        duckdb_input_error(duckdb.InterruptException("INTERRUPT Error: Query interrupted"), "t.csv")
    with pytest.raises(KeyboardInterrupt):  # what the Arrow batch reader raises
        duckdb_input_error(RuntimeError("Query interrupted"), "t.csv")
    assert isinstance(duckdb_input_error(duckdb.InvalidInputException("CSV Error on Line: 3"), "t.csv"), InputError)


@pytest.mark.parametrize(
    "text, fragment",
    [
        (",sex,age\n0,F,30\n1,M,40\n", "column 1 of the header has no name (an index column written by pandas?"),
        ("sex,,age\nF,1,30\n", "column 2 of the header has no name: name every column"),
        ("sex, ,age\nF,1,30\n", "column 2 of the header has no name"),  # blank counts as empty
        ("sex,age,\nF,30,\n", "column 3 of the header has no name"),  # a trailing delimiter
        ("a;;b;\n1;2;3;4\n", "columns 2, 4 of the header have no name"),
    ],
)
def test_an_empty_header_name_is_refused_naming_its_position(tmp_path, text, fragment, monkeypatch):
    """The header alone decides (column names are public): no record is read, and every reader refuses alike."""
    p = write(tmp_path, text)
    for reader in (csv_layout, table_columns, read_table):
        with pytest.raises(InputError) as err:
            reader(p)
        assert fragment in str(err.value) and str(err.value).startswith(str(p)), err.value
        assert "\n" not in str(err.value)
    from privsample.api.plan import header_names

    with pytest.raises(InputError, match="of the header"):
        header_names(p)


def test_an_empty_parquet_column_name_is_refused(tmp_path):
    import pandas as pd

    p = tmp_path / "t.parquet"
    pd.DataFrame({"a": [1, 2], "": [3, 4]}).to_parquet(p, index=False)
    with pytest.raises(InputError, match="column 2 of the Parquet file has no name"):
        table_columns(p)
