"""Query-time synonyms: a small generic built-in table plus the vault's own file.

Synonyms only expand the query for BM25F at weight 0.5 (rankScore); the raw
``score`` never sees them (SPEC §2). The vault file is
``<vault>/synonyms.txt``: one group per line, terms separated by commas,
``#`` starts a comment. Every term of a group expands to every other one.
The built-in table stays small and generic; it is never tuned on evaluation
queries.
"""

from __future__ import annotations

import os
from pathlib import Path

from dreamdb.analyzer import analyze

VAULT_SYNONYMS_FILE = "synonyms.txt"

BUILTIN_GROUPS: tuple[tuple[str, ...], ...] = (
    ("database", "db"),
    ("configuration", "config", "settings"),
    ("authentication", "auth", "login"),
    ("repository", "repo"),
    ("documentation", "docs"),
    ("directory", "folder"),
    ("performance", "perf"),
    ("delete", "remove"),
    ("error", "failure"),
    ("bug", "defect"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("python", "py"),
    ("kubernetes", "k8s"),
    ("environment", "env"),
    ("dependency", "dep"),
    ("message", "msg"),
    ("application", "app"),
)
"""Common software abbreviations and their expansions (generic, not vault-specific)."""


class SynonymTable:
    """Maps an analyzed term to the analyzed terms of its groups.

    Args:
        groups: iterable of term groups (raw text; analyzed here).
    """

    def __init__(self, groups) -> None:
        self._map: dict[str, set[str]] = {}
        for group in groups:
            terms = []
            for text in group:
                terms.extend(analyze(text))
            uniq = list(dict.fromkeys(terms))
            for t in uniq:
                self._map.setdefault(t, set()).update(x for x in uniq if x != t)

    def expand(self, term: str) -> set[str]:
        """Synonym terms of ``term`` (empty set if none)."""
        return self._map.get(term, set())

    def __len__(self) -> int:
        return len(self._map)


def read_groups(path: Path) -> list[list[str]]:
    """Parse a synonyms file (missing or unreadable file → no groups)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    groups = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            group = [t.strip() for t in line.split(",") if t.strip()]
            if len(group) >= 2:
                groups.append(group)
    return groups


_cache: dict[str, tuple[tuple[int, int], SynonymTable]] = {}


def load_synonyms(vault: Path | None) -> SynonymTable:
    """Built-in groups plus ``<vault>/synonyms.txt`` (re-read when the file's mtime, size or ctime changes)."""
    ck = os.path.join(vault, VAULT_SYNONYMS_FILE) if vault else ""
    try:
        st = os.stat(ck) if ck else None
        key = (st.st_mtime_ns, st.st_size, st.st_ctime_ns) if st else (0, 0, 0)
    except OSError:
        key = (0, 0, 0)
    hit = _cache.get(ck)
    if hit and hit[0] == key:
        return hit[1]
    path = Path(ck) if ck else None
    table = SynonymTable([*BUILTIN_GROUPS, *(read_groups(path) if path and key != (0, 0, 0) else [])])
    _cache[ck] = (key, table)
    return table
