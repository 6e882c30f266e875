"""``dreamdb recall``."""

from __future__ import annotations

import click

from dreamdb.cli.options import FreeTextCommand, WholeNumber, json_option, vault_option


@click.command(cls=FreeTextCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--top", "-n", type=WholeNumber(1, 50), default=5, show_default=True, help="Number of hits.")
@click.option("--types", "-t", metavar="A,B", help="Only these document types (knowledge, feature, task, memory, changelog, objective, insight, thesis, bookmark).")
@click.option("--exclude-types", metavar="A,B", help="Drop these document types.")
@click.option("--tags", metavar="A,B", help="Only documents with any of these tags.")
@click.option("--since", metavar="WHEN", help="Only documents dated on/after WHEN (ISO-8601 or relative: -30d, '2 weeks').")
@click.option("--until", metavar="WHEN", help="Only documents dated on/before WHEN (a date: up to the end of that day).")
@click.option("--status", metavar="A,B", help="Only documents with one of these statuses.")
@click.option("--level", type=WholeNumber(1, 3), help="Only documents of at least this importance (1–3).")
@click.option("--include-expired", is_flag=True, help="Keep documents past their 'expires' date.")
@click.option("--mode", type=click.Choice(["bm25", "hybrid", "dense", "rrf"], case_sensitive=False),
              help="Ranking mode (default bm25; env DREAMDB_RECALL_MODE).")
@click.option("--now", metavar="ISO", help="Fix the clock (recency, expiry, relative dates), e.g. 2026-08-18T00:00:00Z.")
@vault_option(multiple=True)
@json_option
@click.option("--plain", is_flag=True, help="One tab-separated line per hit: rankScore, score, doc_id, title, path.")
@click.option("--explain", is_flag=True, help="Show every signal behind each hit's rankScore.")
def recall(query, top, types, exclude_types, tags, since, until, status, level, include_expired, mode, now, vaults,
           as_json, plain, explain):
    """Recall the vault documents that best match QUERY.

    QUERY is plain text: quotes, NOT, *, : and parentheses are ordinary
    characters, and a document matching any term can be returned. Hits are
    sorted by rankScore (in hybrid mode the fused score, except that BM25's
    top hit stays first when it leads clearly: the pin guard, shown by
    --explain); 'score' is the raw BM25 that thresholds use.

    \b
    Examples:
      dreamdb recall how does the sleep debt score work
      dreamdb recall --types knowledge,feature --top 10 "dashboard security"
      dreamdb recall --since -30d --json release
      dreamdb recall -- -x      (a query starting with '-': after --)
    """
    from dreamdb.quickcli import run_recall

    text = " ".join(query).strip()
    if not text:
        raise click.UsageError("QUERY is empty.")
    run_recall(text, vaults=vaults, top=top, mode=mode, as_json=as_json, plain=plain, explain=explain, types=types,
               exclude_types=exclude_types, tags=tags, since=since, until=until, status=status, level=level,
               include_expired=include_expired, now=now)
