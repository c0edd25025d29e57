"""Reusable widgets of the session screen."""
