"""The SQL fencing recipe of docs/locks.md, run on sqlite3: the columns, the conditional
UPDATE in its two forms (the strict one, one write per token; the one with the owner,
several), the upsert for a row that may not exist yet, and what 0 rows changed means.

In every form a write with a token smaller than the largest one the row has accepted
changes nothing, so a paused holder that wakes up after a newer holder wrote cannot
overwrite its work; and a write with an equal token from another owner changes nothing
either, so two holders that a failover of the lock's deployment gave one token never
interleave (the first to write keeps the row)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

SCHEMA = "CREATE TABLE ledger (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)"

COLUMNS = (
    "ALTER TABLE ledger ADD COLUMN fence_token BIGINT NOT NULL DEFAULT 0;",
    "ALTER TABLE ledger ADD COLUMN fence_owner TEXT NOT NULL DEFAULT '';",
)
"""The columns the recipe adds beside the data, once."""

STRICT = (
    "UPDATE ledger SET balance = :balance, fence_token = :token"
    " WHERE id = :id AND fence_token < :token"
)
"""The issue's form: the first write of each token; any tie is refused."""

WITH_OWNER = (
    "UPDATE ledger SET balance = :balance, fence_token = :token, fence_owner = :owner"
    " WHERE id = :id AND (fence_token < :token"
    " OR (fence_token = :token AND fence_owner = :owner))"
)
"""Several writes per hold: a tie is accepted from the owner that first wrote the token."""

UPSERT = (
    "INSERT INTO ledger (id, balance, fence_token, fence_owner)"
    " VALUES (:id, :balance, :token, :owner)"
    " ON CONFLICT (id) DO UPDATE SET balance = excluded.balance,"
    " fence_token = excluded.fence_token, fence_owner = excluded.fence_owner"
    " WHERE ledger.fence_token < excluded.fence_token"
    " OR (ledger.fence_token = excluded.fence_token"
    " AND ledger.fence_owner = excluded.fence_owner)"
)
"""The same rule for a row that may not exist yet (SQLite >= 3.24, PostgreSQL)."""


@pytest.fixture
def db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(SCHEMA)
    for column in COLUMNS:
        db.execute(column)
    db.execute("INSERT INTO ledger (id, balance) VALUES (1, 100)")
    return db


def write(db: sqlite3.Connection, sql: str, balance: int, token: int, owner: str = "") -> int:
    params = {"balance": balance, "token": token, "owner": owner, "id": 1}
    return db.execute(sql, params).rowcount


def row(db: sqlite3.Connection) -> tuple[int, int]:
    balance, token = db.execute("SELECT balance, fence_token FROM ledger").fetchone()
    return balance, token


def test_the_strict_form_takes_the_first_write_of_each_token(db: sqlite3.Connection) -> None:
    assert write(db, STRICT, 150, token=7) == 1  # holder with token 7
    assert write(db, STRICT, 175, token=8) == 1  # the next holder
    assert write(db, STRICT, 999, token=7) == 0  # the first holder, paused past its lease
    assert write(db, STRICT, 666, token=8) == 0  # a tie: refused, even from the holder
    assert row(db) == (175, 8)


def test_the_owner_form_lets_the_first_writer_of_a_token_write_again(
    db: sqlite3.Connection,
) -> None:
    assert write(db, WITH_OWNER, 150, token=7, owner="a") == 1
    assert write(db, WITH_OWNER, 160, token=7, owner="a") == 1  # the same hold, again
    assert write(db, WITH_OWNER, 175, token=8, owner="b") == 1  # the next holder
    assert write(db, WITH_OWNER, 999, token=7, owner="a") == 0  # stale
    # The replication race: the new master counted token 8 again for another holder.
    assert write(db, WITH_OWNER, 666, token=8, owner="c") == 0
    assert write(db, WITH_OWNER, 180, token=8, owner="b") == 1
    assert row(db) == (180, 8)


def test_the_upsert_creates_the_row_and_then_follows_the_same_rule(
    db: sqlite3.Connection,
) -> None:
    db.execute("DELETE FROM ledger")
    assert write(db, UPSERT, 50, token=3, owner="a") == 1  # created
    assert write(db, UPSERT, 60, token=3, owner="a") == 1
    assert write(db, UPSERT, 70, token=3, owner="b") == 0  # a tie from another owner
    assert write(db, UPSERT, 80, token=2, owner="a") == 0  # stale
    assert row(db) == (60, 3)


class Refused(Exception):
    """The fenced UPDATE changed no row: the token was refused (or the row is gone)."""


def test_zero_rows_changed_rolls_the_holders_transaction_back(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE audit (note TEXT)")
    write(db, WITH_OWNER, 175, token=8, owner="b")
    db.commit()
    with pytest.raises(Refused), db:  # the stale holder's critical section, one transaction
        if write(db, WITH_OWNER, 999, token=7, owner="a") == 0:  # the fenced UPDATE first
            raise Refused  # roll back: stop, and take the lock again for a new token
        db.execute("INSERT INTO audit VALUES ('paid 999')")
    assert db.execute("SELECT COUNT(*) FROM audit").fetchone() == (0,)
    assert row(db) == (175, 8)
    # 0 rows also when the row does not exist: a SELECT tells the two apart
    assert db.execute("SELECT 1 FROM ledger WHERE id = 1").fetchone() is not None


def test_the_docs_show_the_statements_tested_here() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "locks.md").read_text()
    shown = " ".join(docs.split())
    for statement in (*COLUMNS, STRICT, WITH_OWNER, UPSERT):
        assert " ".join(statement.split()) in shown, statement
