"""Code-edit workspaces and patches."""
