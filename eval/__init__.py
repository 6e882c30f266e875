"""dreamdb's evaluation suite, runnable as ``python -m eval`` from the repository root.

The code lives in :mod:`dreamdb.evaluation` (``dreamdb eval`` runs the same
command); see ``eval/README.md``.
"""
