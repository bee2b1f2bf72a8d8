"""Direct collocation of gaits: the transcription's methods and mesh, and its structure from the layout."""
