"""Shared program facts the rules ask for (provenance, grad context, loops, imports)."""
