"""An index file changed since dreamdb left it is checked before it is trusted (dreamdb.store.trust; QA round 155-F F1)."""

from __future__ import annotations

import random

import dreamdb
from dreamdb.store import trust

QUERY = "dashboard server security"
NOW = "2026-12-07T12:00:00"


def _flip(path, seed: int, n: int) -> None:
    """The QA tester's flip.py: ``n`` random bits of the file's middle half flipped, in place (seeded)."""
    r = random.Random(seed)
    data = bytearray(path.read_bytes())
    size = len(data)
    for _ in range(n):
        i = r.randrange(size // 4, 3 * size // 4)
        data[i] ^= 1 << r.randrange(8)
    with open(path, "r+b") as f:
        f.write(data)


def _hits(index) -> list[tuple[str, float]]:
    return [(h.doc_id, round(h.score, 4), round(h.rank_score, 4)) for h in index.recall(QUERY, top=10, now=NOW)]


def test_bits_flipped_in_the_real_index_are_found_and_rebuilt(fresh_real_vault):
    with dreamdb.open(fresh_real_vault) as ix:
        ix.sync()
        path = ix.index_path
        expected = _hits(ix)
    assert trust.is_trusted(path)  # (its own sync and close recorded: the next open does not check)
    _flip(path, 4, 20)
    assert not trust.is_trusted(path)
    with dreamdb.open(fresh_real_vault) as ix:
        got = _hits(ix)
        notes = list(ix.notes)
    assert any("quick_check" in n and "rebuilt from the vault" in n for n in notes), notes
    assert got == expected
    assert trust.is_trusted(path)


def test_an_unchanged_index_is_not_checked_and_one_without_a_record_is_checked_once(fresh_real_vault, monkeypatch):
    with dreamdb.open(fresh_real_vault) as ix:
        ix.sync()
        path = ix.index_path
    checks = []
    real = trust.problems_if_changed

    def counting(conn, index_path, rows=100):
        checks.append(trust.signature(index_path) != trust.recorded(index_path))
        return real(conn, index_path, rows)

    monkeypatch.setattr(trust, "problems_if_changed", counting)
    for _ in range(2):
        with dreamdb.open(fresh_real_vault) as ix:
            ix.recall(QUERY, top=3, now=NOW)
    assert checks == [False, False]
    trust.forget(path)  # (an index of an older dreamdb: no record)
    for _ in range(2):
        with dreamdb.open(fresh_real_vault) as ix:
            assert ix.recall(QUERY, top=3, now=NOW)
            assert not any("rebuilt" in n for n in ix.notes)
    assert checks == [False, False, True, False]
