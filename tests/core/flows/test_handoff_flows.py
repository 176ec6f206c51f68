"""The hand-off token (redisson_py.core.flows.handoff.HoldToken): what it says, and that
anything else is refused with ArgumentError naming what is wrong; the hand-off scripts'
replies are the named ones the flows read."""

from __future__ import annotations

import json
import re

import pytest

from redisson_py.core.effects import Script
from redisson_py.core.flows.handoff import HoldToken
from redisson_py.core.scripts import handoff
from redisson_py.core.scripts.handoff import AdoptReply, ExportReply
from redisson_py.errors import ArgumentError

TOKEN = HoldToken(
    client_id="6f1c2d3e-0000-4000-8000-000000000001",
    owner_id="7",
    lock="orders:42",
    kind="reentrant",
    ticket="ab" * 16,
    lease=None,
    ttl_ms=30000,
    exported_at=1764230400.1234,
)


def test_a_token_reads_back_as_written() -> None:
    text = TOKEN.encode()
    assert "\n" not in text
    data = json.loads(text)
    assert data["type"] == "redisson-py-hold" and data["v"] == 1
    assert data["exported_at"] == 1764230400.123
    back = HoldToken.decode(text)
    assert back.field == "6f1c2d3e-0000-4000-8000-000000000001:7"
    assert (back.lock, back.kind, back.lease, back.ttl_ms) == (
        "orders:42",
        "reentrant",
        None,
        30000,
    )


def test_a_write_holds_field_ends_in_write() -> None:
    token = HoldToken.decode(json.dumps({**json.loads(TOKEN.encode()), "kind": "write"}))
    assert token.field.endswith(":7:write")


@pytest.mark.parametrize(
    "junk",
    [
        None,
        "",
        "not json",
        "[]",
        json.dumps({"type": "other"}),
        json.dumps({**json.loads(TOKEN.encode()), "v": 2}),
        json.dumps({**json.loads(TOKEN.encode()), "owner": "seven"}),
        json.dumps({**json.loads(TOKEN.encode()), "client": "a:b"}),
        json.dumps({**json.loads(TOKEN.encode()), "lease": -1}),
        json.dumps({k: v for k, v in json.loads(TOKEN.encode()).items() if k != "ticket"}),
    ],
)
def test_anything_else_is_refused(junk: object) -> None:
    with pytest.raises(ArgumentError):
        HoldToken.decode(junk)


@pytest.mark.parametrize(
    ("script", "replies"), [(handoff.EXPORT, ExportReply), (handoff.ADOPT, AdoptReply)]
)
def test_the_hand_off_scripts_answer_only_their_named_replies(
    script: Script, replies: type[ExportReply | AdoptReply]
) -> None:
    # Every case a flow tells apart is named (export: not held, exported, readers
    # inside; adopt: the field gone, no ticket, adopted); the Lua answers nothing else.
    answered = {int(flag) for flag in re.findall(r"return \{(-?\d+),", script.source)}
    assert answered == {int(reply) for reply in replies}
