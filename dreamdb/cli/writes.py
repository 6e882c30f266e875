"""``dreamdb remember``, ``update`` and ``delete``: atomic edits of the vault."""

from __future__ import annotations

import click

from dreamdb.cli.options import json_option, open_index, vault_option


def _done(as_json: bool, payload: dict, text: str) -> None:
    from dreamdb import output

    click.echo(output.to_json(payload) if as_json else text)


@click.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--type", "entry_type", default="note", show_default=True, help="Entry type (feat, fix, decision, note…).")
@click.option("--scope", help="Area of the project the entry is about.")
@click.option("--summary", help="One-line headline (≤ 200 characters recommended).")
@click.option("--references", "-r", multiple=True, metavar="KIND:VALUE",
              help="Evidence token, repeatable: commit:<sha>, file:<path>, knowledge:<slug>, url:<href>…")
@click.option("--supersedes", metavar="ID", help="Id of the entry this one replaces (as recall shows it).")
@click.option("--author", "authors", multiple=True, help="Author handle (repeatable).")
@click.option("--breaking", is_flag=True, help="Mark the entry as a breaking change.")
@vault_option()
@json_option
def remember(text, entry_type, scope, summary, references, supersedes, authors, breaking, vault, as_json):
    """Add a CHANGELOG entry with TEXT as its description.

    The file is edited atomically; other entries stay byte-for-byte the same.
    An invalid CHANGELOG.json is refused and never overwritten.

    \b
    Example:
      dreamdb remember --type decision --scope recall --summary "BM25 stays the base" \\
        -r knowledge:decision-mem0-vs-bm25-recall "Dense retrieval only re-ranks."
    """
    index = open_index(vault)
    entry = index.remember(" ".join(text), type=entry_type, scope=scope, summary=summary, references=references,
                           supersedes=supersedes, authors=authors, breaking=breaking)
    _done(as_json, entry, f"Remembered as changelog/{entry['id']}")


@click.command()
@click.argument("slug")
@click.option("--description", help="New frontmatter description.")
@click.option("--tags", help="New tags, comma-separated (replaces the list).")
@click.option("--content", help="New body (replaces it).")
@click.option("--append", help="Text appended to the body.")
@click.option("--pin/--unpin", default=None, help="Set or clear 'pinned'.")
@vault_option()
@json_option
def update(slug, description, tags, content, append, pin, vault, as_json):
    """Edit the document SLUG (type/slug or slug): frontmatter keys or body.

    Only the changed frontmatter lines are rewritten; the rest of the file
    keeps its bytes. Slugs cannot point outside the vault.
    """
    index = open_index(vault)
    tag_list = [t.strip() for t in tags.split(",") if t.strip()] if tags is not None else None
    path = index.update(slug, description=description, tags=tag_list, content=content, append=append, pin=pin)
    _done(as_json, {"updated": str(path)}, f"Updated {path}")


@click.command()
@click.argument("slug")
@click.option("--force", is_flag=True, help="Also delete pinned documents.")
@vault_option()
@json_option
def delete(slug, force, vault, as_json):
    """Delete the document SLUG (moved to the index folder's trash, so it can be restored)."""
    index = open_index(vault)
    kept = index.delete(slug, force=force)
    _done(as_json, {"deleted": slug, "moved_to": str(kept)}, f"Deleted {slug} (a copy is kept at {kept})")
