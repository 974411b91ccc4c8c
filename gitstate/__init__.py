"""git agy-state: an AI coding agent's working memory (STATE.md), kept as commits in git."""

__version__ = "0.1.0"
