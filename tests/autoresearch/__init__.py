"""Tests of the autoresearch package, laid out like it."""
