"""dreamdb.records: the dataclass subset the recall path uses without importing dataclasses."""

from __future__ import annotations

import pytest

from dreamdb.records import FrozenRecordError, factory, fields, record, replace


@record
class Point:
    x: int
    y: int = 0
    tags: list = factory(list)
    _cache: str | None = None


@record(frozen=True)
class Key:
    name: str
    size: int


def test_init_positional_keyword_and_defaults():
    p = Point(1)
    assert (p.x, p.y, p.tags, p._cache) == (1, 0, [], None)
    q = Point(2, y=5, tags=["a"], _cache="c")
    assert (q.x, q.y, q.tags, q._cache) == (2, 5, ["a"], "c")
    with pytest.raises(TypeError):
        Point()  # x has no default
    with pytest.raises(TypeError):
        Point(1, nope=3)


def test_factory_default_is_fresh_per_instance():
    a, b = Point(1), Point(1)
    a.tags.append("x")
    assert b.tags == [] and a.tags == ["x"]
    assert "tags" not in Point.__dict__  # the factory is not left behind as a shared class attribute


def test_repr_and_eq_leave_out_underscore_fields():
    assert repr(Point(1, 2, ["t"], _cache="hidden")) == "Point(x=1, y=2, tags=['t'])"
    assert Point(1, 2, _cache="a") == Point(1, 2, _cache="b")
    assert Point(1, 2) != Point(1, 3)
    assert Point(1) != (1, 0, [])  # another class never equals
    with pytest.raises(TypeError):
        hash(Point(1))  # mutable records are unhashable, as non-frozen dataclasses


def test_frozen_records_are_hashable_and_immutable():
    k = Key("a.md", 3)
    assert k == Key("a.md", 3) and len({k, Key("a.md", 3), Key("b.md", 3)}) == 2
    with pytest.raises(FrozenRecordError):
        k.size = 4
    with pytest.raises(AttributeError):  # FrozenRecordError is an AttributeError, like dataclasses'
        del k.name
    assert k.size == 3


def test_fields_and_replace():
    assert fields(Point) == ("x", "y", "tags") == fields(Point(1))  # a private field without a property: left out
    p = Point(1, 2, ["t"], _cache="c")
    q = replace(p, y=9)
    assert (q.x, q.y, q.tags, q._cache) == (1, 9, ["t"], "c") and p.y == 2
    assert replace(p, _cache="d")._cache == "d"  # (still settable by its own name)
    assert replace(Key("a", 1), size=2) == Key("a", 2)
    with pytest.raises(TypeError, match="no field z"):
        replace(p, z=1)


def test_field_without_default_after_default_is_refused():
    with pytest.raises(TypeError, match="without a default"):
        @record
        class Bad:
            a: int = 1
            b: int


def test_every_field_of_a_hit_the_snippet_too_can_be_changed_in_place(tiny_vault):
    """QA round 151-C F6: the README says a hit can be changed in place, as a default dataclass, and ``fields(hit)``
    lists ``snippet``, but ``hit.snippet = "x"`` raised AttributeError (a property without a setter). Set before its
    first read, the note's text is not read for it; after, it replaces the one made."""
    import pickle

    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/sleep-debt.md", "---\ntitle: Sleep debt\n---\nHow sleep debt is computed.\n")
    first, second = (dreamdb.open(tiny_vault).recall("sleep debt", top=1)[0] for _ in range(2))
    assert "computed" in second.snippet
    for hit in (first, second):  # (not read yet; read)
        for name in fields(hit):
            setattr(hit, name, getattr(hit, name))
        hit.snippet = "a snippet of my own"
        assert hit.snippet == "a snippet of my own" and hit.as_dict()["snippet"] == "a snippet of my own"
        assert pickle.loads(pickle.dumps(hit)).snippet == "a snippet of my own"
        assert replace(hit, rank_score=2.0).snippet == "a snippet of my own"
        hit.doc_id = "knowledge/other"
        assert hit.doc_id == "knowledge/other"


def test_a_private_field_read_through_a_property_is_given_by_the_propertys_name(tiny_vault):
    """QA round 62 L5: ``fields(hit)`` listed ``_snippet`` and ``_snippet_source``, not ``snippet``, and
    ``replace(hit, snippet=…)`` was refused."""
    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/sleep-debt.md", "---\ntitle: Sleep debt\n---\nHow sleep debt is computed.\n")
    hit = dreamdb.open(tiny_vault).recall("sleep debt", top=1)[0]
    assert "snippet" in fields(hit) and not any(n.startswith("_") for n in fields(hit))
    assert fields(hit)[:3] == ("doc_id", "type", "slug")
    changed = replace(hit, snippet="a snippet of my own", rank_score=1.5)
    assert changed.snippet == "a snippet of my own" and changed.rank_score == 1.5 and changed.doc_id == hit.doc_id
    assert hit.snippet != "a snippet of my own"
    assert set(hit.as_dict()) >= {"snippet", "score", "rank_score", "rankScore", "doc_id"}
    # a record rebuilt from its fields, as from a dataclass's (QA round 64 L6), and never both names at once
    rebuilt = type(hit)(**{n: getattr(hit, n) for n in fields(hit)})
    assert rebuilt == hit and rebuilt.snippet == hit.snippet
    with pytest.raises(TypeError, match="given twice"):
        replace(hit, snippet="A", _snippet="B")
    with pytest.raises(TypeError, match="got both"):
        type(hit)(**{n: getattr(hit, n) for n in fields(hit)}, _snippet="B")


def test_the_signature_names_an_unset_default_in_words():
    """QA round 93-C F9: ``help(Hit)`` showed ``snippet=<object object at 0x7f…>``."""
    import inspect

    from dreamdb.api import Hit

    assert str(inspect.signature(Point)) == "(x, y=0, tags=<not given>, _cache=None)"
    assert str(inspect.signature(Hit)).endswith(", *, snippet=<not given>)")


def test_a_hits_as_dict_holds_lists_and_dicts_of_its_own(tiny_vault):
    """QA round 146-F F4: ``hit.as_dict()`` shared the hit's own ``tags``, ``signals`` and ``terms``:
    ``d["tags"].append("MUT")`` changed ``hit.tags``, where :func:`dataclasses.asdict` copies them."""
    import copy

    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/sleep-debt.md", "---\ntitle: Sleep debt\ntags: [health]\n---\nHow sleep debt is computed.\n")
    index = dreamdb.open(tiny_vault)
    for explain in (False, True):
        hit = index.recall("sleep debt", top=1, explain=explain)[0]
        before = copy.deepcopy(hit)
        d = hit.as_dict()
        assert d["tags"] == ["health"] and (d["signals"] is not None) is explain and (d["terms"] is not None) is explain
        d["tags"].append("MUT")
        if explain:
            d["signals"]["bm25"] = -1.0
            d["terms"][0]["tf"]["body"] = 99
            d["terms"].append({})
        assert hit == before and hit.tags == ["health"]
        assert hit.as_dict() == {**d, "tags": ["health"], "signals": before.signals, "terms": before.terms}
    index.close()


@record(frozen=True)
class Labelled:
    name: str
    _label: str | None = None

    @property
    def label(self) -> str:
        return self._label if self._label is not None else self.name.upper()


def test_a_private_field_read_through_a_property_is_compared_and_hashed_by_its_value():
    """QA round 152-A F9: ``==`` left out a private field read through a property (``Hit._snippet``), so records
    differing in what that property reads compared equal; hash follows ``==``."""
    assert Labelled("a") == Labelled("a", label="A") and hash(Labelled("a")) == hash(Labelled("a", label="A"))
    assert Labelled("a", label="b") != Labelled("a") and len({Labelled("a"), Labelled("a", "A"), Labelled("a", "b")}) == 2
    assert replace(Labelled("a"), label="z") == Labelled("a", label="z") != Labelled("a")
    assert Point(1, 2, _cache="a") == Point(1, 2, _cache="b")  # (a private field without a property: still left out)


def test_a_hit_compares_by_its_snippet_and_reads_a_snippet_set_to_none_as_none(tiny_vault):
    """QA round 152-A F9: a hit whose snippet was set compared equal to one with the snippet of the note
    (``_snippet`` was left out of ``==``), and ``hit.snippet = None`` read back as the note's description."""
    import copy
    import pickle

    import dreamdb
    from tests.conftest import write_doc

    write_doc(tiny_vault, "knowledge/sleep-debt.md",
              "---\ntitle: Sleep debt\ndescription: About sleep\n---\nHow sleep debt is computed.\n")
    index = dreamdb.open(tiny_vault)
    now = "2026-01-01T00:00:00Z"
    hit, unread = (index.recall("sleep debt", top=1, now=now)[0] for _ in range(2))
    assert hit == unread and hit.snippet == unread.snippet == "How sleep debt is computed."  # (== made unread's)
    changed = copy.copy(hit)
    assert changed == hit
    changed.snippet = "zzz"
    assert changed != hit and changed.snippet == "zzz" and hit.snippet == "How sleep debt is computed."
    assert replace(hit, snippet="zzz") == changed != replace(hit, rank_score=hit.rank_score + 1)
    assert replace(changed, snippet=hit.snippet) == hit
    with pytest.raises(TypeError):
        hash(hit)  # (mutable, compared by value: unhashable, as a default dataclass)
    # None reads back as None (as a dataclass's field), through every way of setting it, and survives copies
    for nothing in (copy.copy(hit), replace(hit, snippet=None),
                    type(hit)(**{**{n: getattr(hit, n) for n in fields(hit)}, "snippet": None})):
        if nothing.snippet is not None:
            nothing.snippet = None
        assert nothing.snippet is None and nothing.as_dict()["snippet"] is None and nothing != hit
        for copied in (copy.copy(nothing), copy.deepcopy(nothing), pickle.loads(pickle.dumps(nothing)),
                       replace(nothing, rank_score=nothing.rank_score)):
            assert copied.snippet is None and copied == nothing and copied.description == "About sleep"
        nothing.snippet = "back"
        assert nothing.snippet == "back" and nothing == replace(hit, snippet="back")
    index.close()
