"""The vault: discovery (:mod:`.discover`), frontmatter (:mod:`.frontmatter`), parsing into documents (:mod:`.parse`)."""

PARSER_VERSION = "14"  # 14: a note with classic Mac (CR) line ends read as lines, a changelog entry's one author or reference written without a list read; 13: a quoted date-time in UTC, as an unquoted one, and a note in UTF-16/32 read; 12: tags matched by their NFKC form, ı read as i (tags.tag_key); 11: a YAML !!binary value is its UTF-8 text, not b'…'; 10: a changelog id's date part slugified when it is not YYYY-MM-DD, a list or mapping is no pinned flag, tags: true is true; 9: frontmatter without YAML 1.1 base-60 numbers (12:30 is text); expires: DATE ends with its day
"""Bump when parsing changes what documents a file yields: the next sync rebuilds the index."""
