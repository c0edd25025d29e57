"""Screens and modal overlays."""
