"""The bytes on disk: the model objects (no I/O), the version-dispatching loader, the
section-table container of schemas 2 and 3 (``container/``), each revision's codec and its
capability record (``revisions/``), saving and conversion between revisions."""
