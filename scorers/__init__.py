"""brittle.scorers."""
