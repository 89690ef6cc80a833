"""The bytes on disk: the model objects (no I/O), the version-dispatching loader, one reader
and writer per revision (``revisions/``), the Construct schemas (``schemas/``), atomic saving
and conversion between revisions."""
