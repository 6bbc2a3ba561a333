"""Campaign config loading."""
