"""brittle.engine."""
