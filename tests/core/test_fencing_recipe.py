"""The SQL fencing recipe of docs/locks.md, run on sqlite3: a write with a token smaller
than the largest one the row has seen changes nothing, so a paused holder that wakes up
after a newer holder wrote cannot overwrite its work."""

from __future__ import annotations

import sqlite3

RECIPE = (
    "UPDATE ledger SET balance = :balance, fence_token = :token"
    " WHERE id = :id AND fence_token <= :token"
)


def test_a_stale_token_writes_nothing() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE ledger (id INTEGER PRIMARY KEY, balance INTEGER, fence_token INTEGER)")
    db.execute("INSERT INTO ledger VALUES (1, 100, 0)")

    def write(balance: int, token: int) -> int:
        return db.execute(RECIPE, {"balance": balance, "token": token, "id": 1}).rowcount

    assert write(150, token=7) == 1  # holder with token 7
    assert write(175, token=8) == 1  # the next holder
    assert write(999, token=7) == 0  # the first holder, paused past its lease, wakes up
    assert write(180, token=8) == 1  # the current holder may write again
    assert db.execute("SELECT balance, fence_token FROM ledger").fetchone() == (180, 8)
