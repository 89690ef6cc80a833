// Compiles every spec/*.ksy with the pinned kaitai-struct-compiler (see package-lock.json)
// through its JavaScript API. Usage: node spec/ksc/compile.mjs <spec dir> <out dir>
// Writes <out>/python/onert_checkpoint_generated/<id>.py, <out>/javascript/<Id>.js (needs the
// `kaitai-struct` runtime, pinned here too) and <out>/graphviz/<id>.dot.
// Called by spec/regenerate.py; not meant to be run on its own.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const compiler = require("kaitai-struct-compiler");
const yaml = require("js-yaml");

const [specDir, outDir] = process.argv.slice(2);
const targets = {
  python: "python/onert_checkpoint_generated",
  javascript: "javascript",
  graphviz: "graphviz",
};

const importer = {
  importYaml(name, mode) {
    const file = path.join(specDir, name.replace(/^\//, "") + ".ksy");
    return Promise.resolve(yaml.load(fs.readFileSync(file, "utf8")));
  },
};

const files = fs.readdirSync(specDir).filter((f) => f.endsWith(".ksy")).sort();
for (const file of files) {
  const spec = yaml.load(fs.readFileSync(path.join(specDir, file), "utf8"));
  for (const [lang, sub] of Object.entries(targets)) {
    const out = await compiler.compile(lang, spec, importer, false);
    for (const [name, text] of Object.entries(out)) {
      const dest = path.join(outDir, sub, name);
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.writeFileSync(dest, text);
    }
  }
  console.log(`compiled ${file} (kaitai-struct-compiler ${compiler.version})`);
}
