"""brittle.cli."""
