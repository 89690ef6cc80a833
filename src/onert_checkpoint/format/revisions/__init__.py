"""One package per revision (v1, wof, v2, v3), each its codec: how it is read (validated) and
written; ``registry`` holds the revisions' capability records."""
