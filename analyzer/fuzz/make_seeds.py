#!/usr/bin/env python3
r"""Writes the store_reader_fuzz seeds that are valid SQLite files with hostile content.

A fuzzer that flips bytes rarely turns a store into another *valid* store, so the hostile-but-valid
cases users can hand the reader are seeded here: extreme and overflowing times, start after end,
huge and invalid-UTF-8 text, NULLs and wrong types where the schema says NOT NULL (a newer or
hand-edited schema), dangling string ids, cycles in parent ids, a newer schema version and columns
or tables this version does not know. Each file stays under the fuzzer's -max_len (96 KiB).

The seeds take their schema from BASE, a store the real writer wrote, and name no table's full column list, so
they follow the declared schema (store/include/torchscope/store/records/). They are kept in analyzer/fuzz/corpus
under their names; FuzzSeeds.* (tests/store/FuzzSeedsTest.cpp) fail when the schema changed since they were made.
Regenerate them then (BASE: a current-version store, here what `torchscope import` writes):
    torchscope import tests/corpus/torch_trace/comp_metrics.log \
        tests/corpus/kineto/critical_path_cuda_event_sync_event_sync_trace.json.gz -o /tmp/base.db
    make_seeds.py /tmp/base.db analyzer/fuzz/corpus
"""
import shutil
import sqlite3
import sys
from pathlib import Path

MAX_BYTES = 96 * 1024
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def columns(db, table):
    return [(row[1], (row[2] or "").upper()) for row in db.execute(f'PRAGMA table_info("{table}")')]


def tables(db):
    return [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


def synthetic_value(name, kind, index):
    if name == "id":
        return None  # the rowid
    if "INT" in kind:
        return index + 1
    if "REAL" in kind:
        return 0.5 + index
    if name in ("args", "properties", "hints", "guard_failures", "details"):
        return "{}"
    return f"{name}-{index}"


def insert_row(db, table, index, values=None, verb="INSERT OR IGNORE"):
    """A row of `table`: `values` by column name, every other column a synthetic value of its type, so that
    the seeds follow whatever columns the store's schema has."""
    values = values or {}
    cols = [c for c in columns(db, table) if c[0] != "id"]
    names = ", ".join(f'"{c[0]}"' for c in cols)
    marks = ", ".join("?" for _ in cols)
    row = [values[name] if name in values else synthetic_value(name, kind, index) for name, kind in cols]
    db.execute(f'{verb} INTO "{table}" ({names}) VALUES ({marks})', row)


def fill_empty_tables(db, rows=3):
    """Gives every table a few rows, so that every loader and rule has something to read."""
    for table in tables(db):
        if table == "run" or db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]:
            continue
        for index in range(rows):
            insert_row(db, table, index)


def extreme_values(db):
    """Times and counts at the edges: overflowing sums and spans, start after end, negative ids, hostile ranks."""
    palette = [INT64_MAX, INT64_MIN, -1, 0, INT64_MAX - 1, -(2**62)]
    real_palette = [1e308, -1e308, float("inf"), float("-inf"), -0.0, 5e-324]
    for table in tables(db):
        for position, (name, kind) in enumerate(columns(db, table)):
            if name == "id":
                continue
            if "INT" in kind:
                value = palette[position % len(palette)]
                db.execute(f'UPDATE OR IGNORE "{table}" SET "{name}" = ? WHERE rowid % 2 = 0', (value,))
                db.execute(f'UPDATE OR IGNORE "{table}" SET "{name}" = ? WHERE rowid % 2 = 1', (palette[(position + 1) % 6],))
            elif "REAL" in kind:
                db.execute(f'UPDATE "{table}" SET "{name}" = ?', (real_palette[position % len(real_palette)],))
    # Hostile ranks: a world of INT64_MAX ranks, and a rank outside the world it declares.
    db.execute("UPDATE processes SET rank = 0, world_size = ? WHERE pid = (SELECT min(pid) FROM processes)", (INT64_MAX,))
    insert_row(db, "processes", 0, {"pid": INT64_MIN + 1, "parent_pid": -1, "name": "python", "command_line": "train.py",
                                    "rank": INT64_MAX, "local_rank": 0, "world_size": 2, "start_ns": INT64_MIN,
                                    "end_ns": INT64_MAX}, verb="INSERT OR REPLACE")


def huge_strings(db, size):
    """Long text where reports print names, reasons and paths, with markup and invalid UTF-8 in it."""
    hostile = "<script>alert(1)</script>\"'&\x1b[31m\x00\t\n|`*_" + "\udcff".encode("utf-8", "surrogateescape").decode(
        "latin-1")
    long_text = (hostile * (size // len(hostile) + 1))[:size]
    db.execute("UPDATE strings SET value = ? || id WHERE id = (SELECT min(id) FROM strings)", (long_text,))
    # Shorter elsewhere: the file must stay under the fuzzer's -max_len.
    shorter = long_text[: size // 8]
    db.execute("UPDATE run SET command_line = ?", (shorter,))
    for table, column in [("graph_breaks", "reason"), ("compiles", "co_filename"), ("recompiles", "guard_failures")]:
        db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = (SELECT min(rowid) FROM "{table}")', (shorter,))
    # Bytes that are not UTF-8, stored as text.
    db.execute("UPDATE graph_breaks SET explanation = CAST(X'C328FFFE' AS TEXT)")
    db.execute("UPDATE processes SET name = CAST(X'80808080' AS TEXT)")


def relax_schema(db):
    """Recreates every table without its constraints (as a newer or hand-edited schema could),
    then adds rows of NULLs and of values of the wrong type."""
    db.execute("PRAGMA legacy_alter_table = ON")  # the views keep naming the recreated tables
    for table in tables(db):
        cols = columns(db, table)
        db.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_old"')
        db.execute(f'CREATE TABLE "{table}" ({", ".join(f"{name} {kind}" for name, kind in cols)})')
        db.execute(f'INSERT INTO "{table}" SELECT * FROM "{table}_old"')
        db.execute(f'DROP TABLE "{table}_old"')
        names = ", ".join(f'"{c[0]}"' for c in cols)
        marks = ", ".join("?" for _ in cols)
        db.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', [None] * len(cols))
        wrong = [b"\x00\xff" if "INT" in kind else 12345 if "TEXT" in kind else "not a number" for _, kind in cols]
        db.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', wrong)


def dangling_and_cycles(db):
    """Parent ids that form cycles, string ids that point nowhere, duplicate ranks."""
    db.execute("DELETE FROM processes")
    for pid, parent, rank in [(1, 2, 0), (2, 1, 0), (3, 3, 1), (0, -1, -1), (4, 4, INT64_MAX)]:
        insert_row(db, "processes", pid, {"pid": pid, "parent_pid": parent, "name": "python", "command_line": "train.py",
                                          "rank": rank, "local_rank": rank, "world_size": 2, "start_ns": 100,
                                          "end_ns": 50}, verb="INSERT")
    for table, column in [("kernels", "name_id"), ("api_calls", "name_id"), ("cpu_ops", "name_id"), ("syncs", "op_id")]:
        db.execute(f'UPDATE "{table}" SET "{column}" = 999999 WHERE rowid % 2 = 0')
    # Every compile the same frame, attempts looping back on each other.
    db.execute("UPDATE compiles SET frame_id = 0, frame_compile_id = 0")
    db.execute("UPDATE graph_breaks SET frame_id = 0, frame_compile_id = 0")


def newer_additions(db, version):
    """What a later version could add: a table, columns, a view and an index this one does not know."""
    db.execute("CREATE TABLE from_the_future (id INTEGER PRIMARY KEY, payload BLOB)")
    db.execute("INSERT INTO from_the_future (payload) VALUES (randomblob(64))")
    for table in ("kernels", "steps", "compiles", "processes"):
        db.execute(f'ALTER TABLE "{table}" ADD COLUMN future_column TEXT NOT NULL DEFAULT \'later\'')
    db.execute("CREATE VIEW future_view AS SELECT * FROM steps")
    db.execute("CREATE INDEX future_index ON kernels (future_column)")
    db.execute(f"PRAGMA user_version = {version}")


def write(base, out_dir, name, change):
    path = out_dir / name
    path.unlink(missing_ok=True)
    shutil.copyfile(base, path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA page_size = 512")
    db.execute("VACUUM")
    db.execute("BEGIN")
    fill_empty_tables(db)
    change(db)
    db.execute("COMMIT")
    db.execute("VACUUM")
    db.close()
    size = path.stat().st_size
    if size > MAX_BYTES:
        sys.exit(f"{path}: {size} bytes, over the fuzzer's {MAX_BYTES}")
    print(f"{path}: {size} bytes")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    version = sqlite3.connect(base).execute("PRAGMA user_version").fetchone()[0]
    write(base, out_dir, "valid-current.db", lambda db: None)
    write(base, out_dir, "extreme-values.db", extreme_values)
    write(base, out_dir, "huge-strings.db", lambda db: huge_strings(db, 8 * 1024))
    write(base, out_dir, "nulls-and-wrong-types.db", relax_schema)
    write(base, out_dir, "cycles-and-dangling-ids.db", dangling_and_cycles)
    write(base, out_dir, "additions-same-version.db", lambda db: newer_additions(db, version))
    write(base, out_dir, "newer-version.db", lambda db: newer_additions(db, version + 1))
    # A current store cut in half: the pages after the cut are gone.
    whole = (out_dir / "valid-current.db").read_bytes()
    (out_dir / "valid-current-truncated.db").write_bytes(whole[: len(whole) // 2])


if __name__ == "__main__":
    main()
