"""Which Unicode encoding a text file's byte-order mark names, besides UTF-8.

A Windows editor saves "Unicode" text as UTF-16 (or UTF-32) with a byte-order mark (Unicode §23.8,
"Specials": U+FEFF at the start, in the encoding's own byte order). Such a file holds NUL bytes in
every ASCII letter, so the binary test (a NUL in the first 8 KB, as git's) must not see it first.
"""

from __future__ import annotations

import codecs

_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),  # (UTF-32's first: its LE mark
              (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))  # starts with UTF-16 LE's)


def wide_unicode_codec(data: bytes) -> str | None:
    """``"utf-32"`` or ``"utf-16"`` when ``data`` starts with that encoding's byte-order mark (either byte order;
    Python's codec of that name reads the mark and strips it), else ``None``."""
    for bom, codec in _WIDE_BOMS:
        if data.startswith(bom):
            return codec
    return None
