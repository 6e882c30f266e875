"""``dreamdb recall``."""

from __future__ import annotations

import click

from dreamdb.cli.options import FreeTextCommand, WholeNumber, filter_options, json_option, vault_option


@click.command(cls=FreeTextCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--top", "-n", type=WholeNumber(1, 50), default=5, show_default=True, help="Number of hits.")
@filter_options
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
    --explain, and as "pinned" on its line where a hit below it ranks
    higher); 'score' is the raw BM25 that thresholds use.

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
