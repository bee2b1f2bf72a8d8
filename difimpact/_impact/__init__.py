"""Impulsive impact maps: what happens in zero time."""
