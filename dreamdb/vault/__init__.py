"""The vault: discovery (:mod:`.discover`), frontmatter (:mod:`.frontmatter`), parsing into documents (:mod:`.parse`)."""

PARSER_VERSION = "8"
"""Bump when parsing changes what documents a file yields: the next sync rebuilds the index."""
