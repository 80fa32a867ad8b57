"""Opens the store(s) the collector wrote under a directory (one per traced process)."""
import glob
import os
import sqlite3


def open_stores(directory):
    paths = sorted(glob.glob(os.path.join(directory, "*.db")))
    if not paths:
        raise SystemExit(f"no torchscope store (*.db) under {directory}")
    return [(path, sqlite3.connect(f"file:{path}?mode=ro", uri=True)) for path in paths]


def scalar(connection, sql, params=()):
    return connection.execute(sql, params).fetchone()[0]


def total(directory, sql, params=()):
    return sum(scalar(connection, sql, params) or 0 for _, connection in open_stores(directory))


def diagnostics(directory):
    rows = []
    for _, connection in open_stores(directory):
        rows += connection.execute("SELECT source, severity, message, count FROM diagnostics").fetchall()
    return [dict(zip(("source", "severity", "message", "count"), row)) for row in rows]
