"""``dreamdb lexicon status | build``: the Turkish–English dictionary (see :mod:`dreamdb.lexicon`)."""

from __future__ import annotations

import click

from dreamdb.cli.options import ExistingPath, NonEmptyPath, SuggestingGroup, json_option, say


@click.group("lexicon", cls=SuggestingGroup, context_settings={"help_option_names": ["-h", "--help"]})
def lexicon() -> None:
    """The Turkish–English dictionary that translates query words no note has.

    A Turkish question over English notes (or an English one over Turkish
    notes) shares few words with them. With the lexicon built, recall looks up
    a query word that is in no note and uses its translation that is (of
    several, the one the query's words go with in the notes):
    where no note has the words "uyku borcu", they find the note on sleep
    debt. Words a note has are never changed (their translation only counts
    as a synonym); without the lexicon recall works as before.

    It is built once, offline, from KeNet, the Turkish WordNet, as the PyPI
    package NlpToolkit-WordNet ships it (GPL-3.0; installed by the `lexicon`
    extra), into the user data dir, or $DREAMDB_LEXICON (a file path; `off`
    switches it off).

    \b
    Examples:
      pip install -e '.[lexicon]' && dreamdb lexicon build   (in a clone of dreamdb)
      dreamdb lexicon status --json
    """


@lexicon.command("status", short_help="Is the lexicon built, where, from what.")
@json_option
def status_cmd(as_json):
    """Show whether recall has the lexicon, where it is, and what it was built from.

    \b
    Examples:
      dreamdb lexicon status
      dreamdb lexicon status --json
    """
    from dreamdb import output
    from dreamdb.lexicon import lexicon_status

    st = lexicon_status()
    if as_json:
        click.echo(output.to_json(st))
        return
    if not st["installed"]:
        click.echo(f"not installed: {st['reason']}")
        return
    click.echo(f"installed:  {st['path']} ({st['size_bytes'] / 1e6:.1f} MB)")
    click.echo(f"source:     {st['source']} {st['source_version']}, built {st['built_at']}")
    if st["links"] is not None:
        click.echo(f"links:      {st['links']:,} Turkish–English word pairs")
    if st["glossary_version"] != st["current_glossary_version"]:
        click.echo("glossary:   built without this dreamdb's glossary of the words of software work (sürüm: version, "
                   "istemci: client); run `dreamdb lexicon build` to add it")
    if not st["analysed"]:
        click.echo(f"terms:      stored by analyzer {st['analyzer_version'] or '?'}, this dreamdb's is "
                   f"{st['current_analyzer_version']}: "
                   "each lookup analyses its translations (correct, slower); run `dreamdb lexicon build` to store them again")


@lexicon.command("build", short_help="Build it from the installed KeNet package (offline).")
@click.option("--from", "src", metavar="DIR",
              type=ExistingPath(folder=True, hint="Give --from KeNet's data folder, or leave it out to use the"
                                                  " installed NlpToolkit-WordNet package's."),
              help="KeNet's data folder (turkish_wordnet.xml, english_wordnet_version_31.xml); "
                   "default: the installed NlpToolkit-WordNet package's.")
@click.option("--to", "dest", type=NonEmptyPath(dir_okay=False), metavar="FILE",
              help="File to write (default: $DREAMDB_LEXICON, else the user data dir).")
@json_option
def build_cmd(src, dest, as_json):
    """Build the lexicon from KeNet's XML files (about 10 s, 8 MB), replacing any earlier one.

    The file is written beside its destination and renamed over it when
    complete: an interrupted build leaves the previous lexicon in place.

    \b
    Examples:
      dreamdb lexicon build
      dreamdb lexicon build --to /tmp/kenet.sqlite && DREAMDB_LEXICON=/tmp/kenet.sqlite dreamdb recall "uyku borcu"
    """
    from dreamdb import output
    from dreamdb.lexicon import build_lexicon

    def announce():
        if not as_json:
            say("Reading KeNet's Turkish and English WordNet files (about 10 s) ...")

    st = build_lexicon(dest, src, announce=announce)
    from dreamdb import quickcli

    quickcli.SAVED = f"built the lexicon at {st['path']}"  # an unwritable report must not hide that it is done (QA 84)
    if as_json:
        click.echo(output.to_json(st))
        return
    click.echo(f"Built the lexicon at {st['path']}: {st['links']:,} word pairs, {st['tr_en']:,} Turkish and "
               f"{st['en_tr']:,} English entries, from {st['source']} {st['source_version']} in {st['seconds']:.1f} s")
