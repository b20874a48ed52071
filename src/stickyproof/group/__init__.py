"""group."""
