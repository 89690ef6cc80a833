"""The section-table container that schemas 2 and 3 share (spec/SPEC.md 6): its constants,
the header and section-table rules, the state and origin sections, the extension sections
registered by kind (``extensions``, ``data_blocks``), and the writer that lays out and
checksums a file (``write``). The revisions' own sections are their codecs (``revisions/v2``,
``revisions/v3``)."""
