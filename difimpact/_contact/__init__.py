"""Contact laws: what happens in finite time at one contact."""
