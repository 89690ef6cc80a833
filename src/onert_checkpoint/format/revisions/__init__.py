"""One module per layout revision: how each is read (validated) and written."""
