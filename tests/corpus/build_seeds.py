"""Build the seed cases of the fuzz regression corpus (tests/corpus/files + manifest.json).

    python tests/corpus/build_seeds.py          # rewrite the seed cases, keep every other case
    python tests/corpus/build_seeds.py --check  # exit 1 if the files on disk differ

Every seed is built from raw values (tests/fuzz/structure.py) or from the real onert exports,
and its expected outcome is written here by hand from spec/SPEC.md, not taken from the library:
when the library disagrees, this script says so (a bug, or a spec question) and the replay test
fails until one of them is fixed. Cases added later by the fuzzers (origin "atheris" or
"hypothesis", see tests/fuzz/run.py --add) are kept as they are.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz.structure import raw_v1, raw_wof  # noqa: E402

REAL = ROOT / "tests" / "data" / "real-onert"
FILES = HERE / "files"
MANIFEST = HERE / "manifest.json"
MODEL = "../data/real-onert/fc2.circle"  # relative to this folder

U32_MAX = 2**32 - 1


def put32(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + struct.pack("<I", value & U32_MAX) + data[at + 4 :]


def put8(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + bytes([value]) + data[at + 1 :]


def ok(revision: str, dialect: str | None) -> dict:
    return {"valid": True, "revision": revision, "dialect": dialect}


def err(code: str, field: str, offset: int | None) -> dict:
    return {"error": code, "field": field, "offset": offset}


def seeds() -> list[dict]:
    """(name, bytes, expected outcome, why): the hand-made cases."""
    sgd = (REAL / "fc2-sgd-step8.ckpt").read_bytes()  # opt1=304=other, N=4, S=312
    adam = (REAL / "fc2-adam-step8.ckpt").read_bytes()  # opt1=304 opt2=588 other=872 S=880
    wof = raw_wof([24, 0, 20], b"\1\2\3\4" + b"\5" * 6)  # S=30, data area [20, 30]
    micro_adam = _micro_adam()
    cases = [
        # --- valid files ---------------------------------------------------------------
        ("real-onert-sgd", sgd, ok("v1", "onert"), "real onert 0.1.0 export, SGD"),
        ("real-onert-adam", adam, ok("v1", None), "real onert 0.1.0 export, Adam (fits both)"),
        ("v1-onert-sgd-empty", raw_v1(opt1=20, other=20, n=0), ok("v1", "onert"),
         "N=0, onert SGD (opt1 == other)"),
        ("v1-micro-sgd-empty", raw_v1(n=0), ok("v1", "onert-micro"), "N=0, micro SGD (opt1 0)"),
        ("v1-onert-footerless", raw_v1(tables=[[24]], data=b"wxyz", footer=False, opt1=28),
         ok("v1", "onert"), "earlier onert exporter: ofs_other 0, no footer"),
        ("v1-micro-absent-shuffled",
         raw_v1(tables=[[0, 36, 32]], data=b"BBBBAAAA", step=U32_MAX, epoch=U32_MAX),
         ok("v1", "onert-micro"),
         "absent entry, data stored in reverse order, step/epoch 2**32-1"),
        ("v1-micro-adam-absent", micro_adam, ok("v1", "onert-micro"),
         "micro Adam: entry 0 absent in all three blocks"),
        ("v1-onert-adam-empty-slots", _onert_adam_empty_slot(), ok("v1", "onert"),
         "onert Adam: entry 1 has empty m and v (a tensor without optimizer variables)"),
        ("v1-onert-zero-length-weights", raw_v1(tables=[[28, 28]], opt1=28, data=b""),
         ok("v1", "onert"), "two zero-length weight entries at the end of the block"),
        ("wof-valid", wof, ok("wof", None), "WOF: absent entry, reverse storage order"),
        ("wof-empty", raw_wof([]), ok("wof", None), "WOF with N=0 (8 bytes)"),
        ("wof-all-absent", raw_wof([0, 0]), ok("wof", None), "WOF, every entry absent"),
        ("wof-zero-length-at-end", raw_wof([20, 24, 24], b"abcd"), ok("wof", None),
         "WOF, zero-length entry pointing at the end of the file"),
        # --- revision detection --------------------------------------------------------
        ("empty", b"", err("truncated_header", "header", 0), "0 bytes"),
        ("one-byte", b"\xad", err("truncated_header", "header", 0), "1 byte"),
        ("magic-only", b"\xad\x01", err("truncated_header", "header", 0), "no version byte"),
        ("bad-magic-swapped", put8(put8(sgd, 0, 0x01), 1, 0xAD), err("bad_magic", "magic", 0),
         "magic byte-swapped (big-endian writer)"),
        ("bad-magic-zip", b"PK\x03\x04" + b"\0" * 28, err("bad_magic", "magic", 0), "a zip"),
        ("version-0", put8(sgd, 2, 0), err("unsupported_version", "version", 2), "version 0"),
        ("version-255", put8(sgd, 2, 255), err("unsupported_version", "version", 2),
         "version 255"),
        # --- schema 1 rules, in spec order ---------------------------------------------
        ("v1-header-19", sgd[:19], err("truncated_header", "header", 0), "19-byte header"),
        ("v1-reserved", put8(sgd, 3, 1), err("reserved_nonzero", "reserved", 3),
         "reserved byte 1"),
        ("v1-count-2**32-1", put32(sgd, 16, U32_MAX),
         err("count_exceeds_file", "num_entries", 16), "N = 2**32-1: nothing may be allocated"),
        ("v1-count-one-too-many", put32(sgd, 16, 74),
         err("count_exceeds_file", "num_entries", 16), "20 + 4*74 = 316 > 312"),
        ("v1-truncated-footer", sgd[:-1], err("truncated_file", "ofs_other", 12),
         "last byte of the footer missing"),
        ("v1-other-2**32-1", put32(sgd, 12, U32_MAX), err("truncated_file", "ofs_other", 12),
         "ofs_other + 8 overflows u32: must be computed without overflow"),
        ("v1-trailing-byte", sgd + b"\0", err("trailing_bytes", "footer", 312),
         "one byte after the footer"),
        ("v1-v-without-m", put32(adam, 4, 0), err("optimizer_layout", "ofs_opt1", 4),
         "ofs_opt2 set, ofs_opt1 0"),
        ("v1-sgd-opt1-elsewhere", put32(sgd, 4, 100), err("optimizer_layout", "ofs_opt1", 4),
         "SGD with ofs_opt1 neither 0 nor ofs_other"),
        ("v1-opt1-past-end", put32(adam, 4, 881), err("offset_out_of_bounds", "ofs_opt1", 4),
         "ofs_opt1 = S + 1"),
        ("v1-opt2-2**32-1", put32(adam, 8, U32_MAX), err("offset_out_of_bounds", "ofs_opt2", 8),
         "ofs_opt2 = 2**32-1"),
        ("v1-opt2-inside-m-table", put32(adam, 8, 310), err("block_order", "ofs_opt2", 8),
         "v block starts inside the m block's table"),
        ("v1-opt2-before-opt1", put32(adam, 8, 200), err("block_order", "ofs_opt2", 8),
         "blocks in descending order"),
        ("v1-footerless-v-table-cut",
         raw_v1(opt1=24, opt2=28, n=1, tables=[[32], [32]], data=b"ab", footer=False),
         err("block_order", "header", 0), "footer-less: the v table runs past the end"),
        ("v1-weight-into-header", put32(sgd, 24, 10),
         err("entry_out_of_block", "weights[1]", 24), "weights[1] points into the header"),
        ("v1-weight-into-footer", put32(sgd, 32, 305),
         err("entry_out_of_block", "weights[3]", 32), "weights[3] points into the footer"),
        ("v1-weight-past-end", put32(sgd, 28, 313),
         err("offset_out_of_bounds", "weights[2]", 28), "weights[2] = S + 1"),
        ("v1-weight-self-pointing", put32(sgd, 20, 20),
         err("entry_out_of_block", "weights[0]", 20), "weights[0] points at itself"),
        ("v1-weight-into-m-block", put32(adam, 20, 320),
         err("entry_out_of_block", "weights[0]", 20), "weights[0] points into the m block"),
        ("v1-m-into-weights", put32(adam, 308, 36), err("entry_out_of_block", "m[1]", 308),
         "m[1] points into the weight data"),
        ("v1-v-2**32-1", put32(adam, 600, U32_MAX), err("offset_out_of_bounds", "v[3]", 600),
         "v[3] = 2**32-1"),
        ("v1-hole-before-first", put32(sgd, 20, 40), err("unreferenced_bytes", "weights", 36),
         "bytes 36..40 belong to no entry"),
        ("v1-data-without-entries", raw_v1(tables=[[0]], data=b"junk"),
         err("unreferenced_bytes", "weights", 24), "all entries absent, 4 bytes of data"),
        ("v1-slot-without-weight", _slot_without_weight(), err("slot_without_weight", "m[0]", 32),
         "m[0] present, weights[0] absent"),
        ("v1-slot-size-mismatch", put32(adam, 312, 484), err("slot_size_mismatch", "m[1]", 308),
         "m[1] is 36 bytes, weights[1] 32"),
        ("v1-footerless-absent", raw_v1(tables=[[0, 28]], data=b"abcd", footer=False, opt1=32),
         err("dialect_conflict", "header", 0), "absent entry (micro) in a footer-less file"),
        ("v1-onert-sgd-absent", raw_v1(tables=[[0, 28]], data=b"abcd", opt1=32),
         err("dialect_conflict", "header", 0), "absent entry with onert's SGD offsets"),
        # --- WOF rules (the WOF error is reported when the file is WOF-shaped) -----------
        ("wof-entry-into-table", put32(wof, 12, 4), err("entry_out_of_block", "tensors[1]", 12),
         "tensors[1] points into the header"),
        ("wof-entry-past-end", put32(wof, 16, 31), err("offset_out_of_bounds", "tensors[2]", 16),
         "tensors[2] = S + 1"),
        ("wof-hole", put32(wof, 16, 22), err("unreferenced_bytes", "tensors", 20),
         "bytes 20..22 belong to no entry"),
        ("wof-all-absent-with-data", raw_wof([0, 0, 0], b"junk"),
         err("unreferenced_bytes", "tensors", 20), "WOF-shaped: the WOF error wins"),
        ("wof-reserved", put8(wof, 3, 7), err("reserved_nonzero", "reserved", 3),
         "reserved byte in WOF"),
        ("wof-cut-in-table", wof[:15], err("truncated_header", "header", 0),
         "not WOF-shaped (table does not fit): the schema-1 error is reported"),
        ("wof-count-2**32-1", raw_wof([0, 0, 0, 0], n=U32_MAX),
         err("optimizer_layout", "ofs_opt1", 4),
         "not WOF-shaped: read as schema 1, u32@4 is ofs_opt1 = 2**32-1 with SGD"),
    ]
    out = [{"name": n, "data": d, "expect": e, "why": w, "origin": "seed"} for n, d, e, w in cases]
    # With the circle model of the real files (fc2.circle: 4 trainable tensors of the 4->8->3
    # fully connected model).
    out += [
        {"name": "model-real-adam", "data": adam, "model": MODEL, "expect": ok("v1", None),
         "why": "real Adam export read through its model", "origin": "seed"},
        {"name": "model-count-mismatch", "data": raw_v1(opt1=20, other=20, n=0), "model": MODEL,
         "expect": err("model_mismatch", "num_entries", None),
         "why": "0 entries for a model with 4 trainable tensors", "origin": "seed"},
    ]
    out += v2_seeds(adam, sgd)
    return out


def v2_seeds(adam: bytes, sgd: bytes) -> list[dict]:
    """Schema-2 cases (spec/SPEC.md, section 6), written by the library's v2 writer from the
    real files.

    Skipped while the library has no schema 2."""
    import onert_checkpoint as oc
    from tests.fuzz.structure import reseal_v2

    if 2 not in oc.SUPPORTED_VERSIONS:
        return []
    v2a = oc.to_bytes(oc.load(adam), revision="v2")
    v2s = oc.to_bytes(oc.load(sgd), revision="v2")
    size = len(v2a)
    cases = [
        ("v2-real-adam", v2a, ok("v2", None), "real Adam export converted to schema 2"),
        ("v2-real-sgd", v2s, ok("v2", None), "real SGD export converted to schema 2"),
        ("v2-header-63", v2a[:63], err("truncated_header", "header", 0), "H1: 63 bytes"),
        ("v2-header-crc", put32(v2a, 4, 0), err("header_checksum", "header_crc", 4),
         "H2: header CRC-32C zeroed"),
        ("v2-reserved0", reseal_v2(put8(v2a, 3, 1)), err("reserved_nonzero", "reserved0", 3),
         "H3: resealed, reserved0 = 1"),
        ("v2-cut", v2a[:-1], err("truncated_file", "len_file", 8), "H4: last byte missing"),
        ("v2-trailing", reseal_v2(v2a + b"\0"), err("trailing_bytes", "file", size),
         "H4: one byte after len_file, resealed"),
    ]
    nan = oc.to_bytes(
        oc.Checkpoint(state=oc.TrainingState(step=3, learning_rate=float("nan")), revision="v2")
    )
    cases += [
        ("v2-state-nan", nan, ok("v2", None),
         "a NaN learning rate (found by a mutation run: the round trip compared NaN != NaN)"),
        ("v2-empty-data-section", _v2_raw([(5, 0, struct.pack("<IIIIQ", 1, 0, 0, 0, 4)),
                                           (0, 0, bytes(152)), (4, 1, b"")]),
         err("empty_section", "data", 448),
         "D0: no tensor and an empty data section (the shape of v2-check-ranges-valueerror in "
         "section order; it used to raise a bare ValueError from numpy)"),
    ]
    out = [{"name": n, "data": d, "expect": e, "why": w, "origin": "seed"} for n, d, e, w in cases]
    return out


def _v2_raw(sections: list[tuple[int, int, bytes]]) -> bytes:
    """A sealed schema-2 file of (kind, flags, body) sections laid out in the order given."""
    from tests.fuzz.structure import reseal_v2

    pos = 64 + 32 * len(sections)
    buf = bytearray()
    table = b""
    bodies = []
    for kind, flags, body in sections:
        pos = -(-pos // 64) * 64
        table += struct.pack("<IIQQII", kind, flags, pos, len(body), 0, 0)
        bodies.append((pos, body))
        pos += len(body)
    buf = bytearray(pos)
    struct.pack_into("<HBBIQQII", buf, 0, 429, 2, 0, 0, pos, 64, len(sections), 0)
    buf[64 : 64 + len(table)] = table
    for at, body in bodies:
        buf[at : at + len(body)] = body
    return reseal_v2(bytes(buf))


def _micro_adam() -> bytes:
    # N=2, entry 0 absent. weights: table 20..28, data 28..32; m: table 32..40, data 40..44;
    # v: table 44..52, data 52..56; footer 56..64.
    return raw_v1(opt1=32, opt2=44, tables=[[0, 28]], data=b"WWWW"
                  + struct.pack("<II", 0, 40) + b"MMMM" + struct.pack("<II", 0, 52) + b"VVVV",
                  step=3, epoch=1)


def _onert_adam_empty_slot() -> bytes:
    # N=2 all present. weights 28..32 (4) and 32..34 (2); m: table 34..42, m[0] 42..46,
    # m[1] empty at 46; v: table 46..54, v[0] 54..58, v[1] empty at 58; footer 58.
    body = (b"AAAA" + b"BB" + struct.pack("<II", 42, 46) + b"mmmm"
            + struct.pack("<II", 54, 58) + b"vvvv")
    return raw_v1(opt1=34, opt2=46, tables=[[28, 32]], data=body, step=5)


def _slot_without_weight() -> bytes:
    # N=2, weights[0] absent; m has both entries; v only entry 1.
    body = (b"WWWW" + struct.pack("<II", 40, 44) + b"mmmm" + b"MMMM"
            + struct.pack("<II", 0, 56) + b"VVVV")
    return raw_v1(opt1=32, opt2=48, tables=[[0, 28]], data=body)


def load_manifest() -> dict:
    if MANIFEST.exists():
        return json.loads(MANIFEST.read_text())
    return {"format": 1, "cases": []}


def write_case(manifest: dict, case: dict) -> None:
    """Store one case (replacing one of the same name) and its file."""
    FILES.mkdir(exist_ok=True)
    file = case["name"] + ".bin"
    (FILES / file).write_bytes(case["data"])
    entry = {"name": case["name"], "file": file, "expect": case["expect"], "why": case["why"],
             "origin": case["origin"]}
    if case.get("known_bug"):
        entry["known_bug"] = case["known_bug"]
    if case.get("model"):
        entry["model"] = case["model"]
    manifest["cases"] = [c for c in manifest["cases"] if c["name"] != case["name"]] + [entry]


def save_manifest(manifest: dict) -> None:
    manifest["cases"].sort(key=lambda c: (c["origin"] != "seed", c["name"]))
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


def library_outcome(data: bytes, model: str | None = None) -> dict:
    import onert_checkpoint as oc

    try:
        ckpt = oc.load(data, model=str(HERE / model)) if model else oc.load(data)
    except oc.CheckpointError as e:
        return err(e.code, e.field, e.offset)
    return ok(ckpt.revision, ckpt.dialect)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare with the files on disk")
    args = ap.parse_args()
    manifest = load_manifest()
    disagree = 0
    for case in seeds():
        got = library_outcome(case["data"], case.get("model"))
        if got != case["expect"]:
            disagree += 1
            print(f"library disagrees on {case['name']}: expected {case['expect']}, got {got}")
        if args.check:
            path = FILES / (case["name"] + ".bin")
            if not path.exists() or path.read_bytes() != case["data"]:
                print(f"{path} is out of date")
                return 1
        else:
            write_case(manifest, case)
    if not args.check:
        save_manifest(manifest)
        print(f"{len(manifest['cases'])} cases in {MANIFEST.relative_to(ROOT)}")
    return 1 if (args.check and disagree) else 0


if __name__ == "__main__":
    sys.exit(main())
