"""brittle.search."""
