"""Evaluation: metrics and runners behind ``dreamdb eval`` / ``python -m eval``."""
