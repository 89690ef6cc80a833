// Parses checkpoint files with the Kaitai-generated JavaScript parsers (generated/javascript,
// compiled from spec/*.ksy by compile.mjs) and the pinned JavaScript runtime (npm
// `kaitai-struct`), and prints each file's layout fields as one JSON line:
//
//   NODE_PATH=spec/ksc/node_modules node spec/ksc/layout.js generated/javascript v1:FILE v2:FILE ...
//
// REVISION:FILE picks the parser (v1, wof, v2, v3). Output per file: {"header": {...}, then the
// offset tables and footer (schema 1), the table (WOF), or the section table with each defined
// section's parsed body (schema 2)}; names and keys are the parsers' decoded strings. A parse
// error prints {"error": "..."}. tests/spec/test_js_schemas.py compares this with the Python library.
// JavaScript numbers hold integers exactly only up to 2^53: u8 fields above it (NO_STATE, the
// bit patterns of state values) print rounded, and the test compares them as doubles.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const KaitaiStream = require("kaitai-struct/KaitaiStream");

const [jsDir, ...files] = process.argv.slice(2);
const parsers = {
  v1: require(path.resolve(jsDir, "OnertCheckpointV1.js")).OnertCheckpointV1,
  wof: require(path.resolve(jsDir, "OnertWof.js")).OnertWof,
  v2: require(path.resolve(jsDir, "OnertCheckpointV2.js")).OnertCheckpointV2,
  v3: require(path.resolve(jsDir, "OnertCheckpointV3.js")).OnertCheckpointV3,
};

function pick(obj, names) {
  const out = {};
  for (const [key, prop] of names) out[key] = obj[prop];
  return out;
}

const table = (t) => (t === undefined || t === null ? null : t.ofsEntries);

function v1Layout(p) {
  return {
    header: pick(p, [["magic", "magic"], ["version", "version"], ["reserved", "reserved"],
      ["ofs_opt1", "ofsOpt1"], ["ofs_opt2", "ofsOpt2"], ["ofs_other", "ofsOther"],
      ["num_entries", "numEntries"]]),
    weights: table(p.weights),
    m: table(p.opt1),
    v: table(p.opt2),
    footer: p.footer === undefined ? null : pick(p.footer, [["step", "step"], ["epoch", "epoch"]]),
  };
}

function wofLayout(p) {
  return {
    header: pick(p, [["magic", "magic"], ["version", "version"], ["reserved", "reserved"],
      ["num_entries", "numEntries"]]),
    tensors: p.ofsEntries,
  };
}

function v2Body(kind, body) {
  if (kind === 1) {
    return {
      num_tensors: body.numTensors,
      records: body.records.map((r) => ({
        ...pick(r, [["index", "index"], ["model_index", "modelIndex"], ["flags", "flags"],
          ["dtype", "dtype"], ["rank", "rank"], ["len_name", "lenName"], ["ofs_name", "ofsName"],
          ["ofs_data", "ofsData"], ["len_data", "lenData"], ["dims", "dims"]]),
        name: r.name === undefined ? null : r.name,
      })),
    };
  }
  if (kind === 2) {
    return {
      ...pick(body.head, [["kind", "kind"], ["num_slots", "numSlots"],
        ["num_tensors", "numTensors"]]),
      slots: body.slots.map((s) => ({ ofs_name: s.ofsName, len_name: s.lenName, name: s.name })),
      entries: body.entries.map((e) => ({ ofs_data: e.ofsData, len_data: e.lenData })),
    };
  }
  if (kind === 3) {
    return {
      num_entries: body.numEntries,
      entries: body.entries.map((e) => ({
        ...pick(e, [["ofs_key", "ofsKey"], ["len_key", "lenKey"], ["value_type", "valueType"],
          ["value", "value"], ["len_value", "lenValue"]]),
        key: e.key,
      })),
    };
  }
  if (kind === 5) {
    return pick(body, [["revision", "revision"], ["dialect", "dialect"], ["flags", "flags"],
      ["num_entries", "numEntries"]]);
  }
  return null; // DATA and kinds the schema does not define stay raw bytes
}

function v2Layout(p) {
  return {
    header: pick(p.header, [["magic", "magic"], ["version", "version"], ["reserved0", "reserved0"],
      ["header_crc", "headerCrc"], ["len_file", "lenFile"],
      ["ofs_section_table", "ofsSectionTable"], ["num_sections", "numSections"],
      ["section_table_crc", "sectionTableCrc"]]),
    sections: p.sectionTable.map((s) => ({
      ...pick(s.entry, [["kind", "kind"], ["flags", "flags"], ["ofs_body", "ofsBody"],
        ["len_body", "lenBody"], ["crc", "crc"]]),
      body: v2Body(s.entry.kind, s.body),
    })),
  };
}

// Schema 3 (SPEC.md 7): the tensors section's columns (null when absent), u64 slot entries, and
// the data ranges the .ksy's `ranges` instance places.
const column = (present, values) => (present ? Array.from(values, Number) : null);

function v3Body(kind, body) {
  if (kind === 1) {
    return {
      num_tensors: body.numTensors,
      columns: body.columns,
      len_data: body.lenData,
      index: column(body.hasIndex, body.index),
      model_index: column(body.hasModelIndex, body.modelIndex),
      len_name: column(body.hasName, body.lenName),
      dtype: column(body.hasDtype, body.dtype),
      rank: column(body.hasShape, body.rank),
      order: column(body.hasOrder, body.order),
      dims: body.hasShape ? body.dims.map((d) => d.dims) : null,
      names: body.hasName ? body.names.map((n) => n.name) : null,
    };
  }
  if (kind === 2) {
    return {
      ...pick(body.head, [["kind", "kind"], ["num_slots", "numSlots"],
        ["num_tensors", "numTensors"]]),
      slots: body.slots.map((s) => ({ ofs_name: s.ofsName, len_name: s.lenName, name: s.name })),
      entries: body.entries,
    };
  }
  return v2Body(kind, body);
}

function v3Layout(p) {
  const out = v2Layout({ ...p, sectionTable: [] });
  out.sections = p.sectionTable.map((s) => ({
    ...pick(s.entry, [["kind", "kind"], ["flags", "flags"], ["ofs_body", "ofsBody"],
      ["len_body", "lenBody"], ["crc", "crc"]]),
    body: v3Body(s.entry.kind, s.body),
  }));
  out.ranges = p.ranges.filter((r) => r.hasState).map((r) => ({
    slot: r.slot, record: r.record, ofs_data: r.ofsData, len_data: r.lenData,
  }));
  return out;
}

const layouts = { v1: v1Layout, wof: wofLayout, v2: v2Layout, v3: v3Layout };
for (const arg of files) {
  const colon = arg.indexOf(":");
  const revision = arg.slice(0, colon);
  const file = arg.slice(colon + 1);
  let out;
  try {
    const data = fs.readFileSync(file);
    const parsed = new parsers[revision](new KaitaiStream(data));
    out = layouts[revision](parsed);
  } catch (err) {
    out = { error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
