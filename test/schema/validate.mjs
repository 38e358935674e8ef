// Checks schemas/manifest.schema.json: every real fixture and shipped manifest is accepted, every bad manifest of
// test/manifest/bad/ is rejected (a YAML parse failure counts as rejected).
// Usage: node validate.mjs SCHEMA FIXTURES_DIR MANIFESTS_DIR BAD_DIR [GOOD_DIR]
import fs from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import yaml from "js-yaml";

// Bad manifests whose fault lies beyond what JSON Schema can say. Keep this list short and every reason true.
const BEYOND_SCHEMA = {
  "absurd_shape.yaml": "the element count is the product of the sizes; JSON Schema cannot multiply",
  "contiguous_true_bad_stride.yaml": "whether a stride is contiguous depends on products of the shape's sizes",
  "data_shape_mismatch.yaml": "the list lengths in `data` must equal the values in `shape`, another field",
  "duplicate_case_name.yaml": "uniqueness of one field across list items (uniqueItems compares whole items)",
  "expand_view_bad_base.yaml": "broadcasting compares base_shape entries with the values in `shape`",
  "file_missing.yaml": "whether a file exists lies outside the document",
  "keyword_input_twice.yaml": "uniqueness of one field across list items (uniqueItems compares whole items)",
  "positional_after_keyword_input.yaml": "the order of list items by a field of each (no item may follow a keyword one)",
  "randint_low_not_below_high.yaml": "low < high compares two numbers of the document",
};

const [schemaPath, fixturesDir, manifestsDir, badDir, goodDir] = process.argv.slice(2);
if (!badDir) {
  console.error("usage: node validate.mjs SCHEMA FIXTURES_DIR MANIFESTS_DIR BAD_DIR");
  process.exit(2);
}

const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, "utf8")));

// The loader reads YAML with the core schema and applies `<<` merge keys; js-yaml's defaults would also turn
// dates into objects, which the loader never does.
const YAML_SCHEMA = yaml.CORE_SCHEMA.extend({ implicit: [yaml.types.merge] });

function yamlFiles(dir, recursive) {
  if (!fs.existsSync(dir)) return [];
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && recursive) out.push(...yamlFiles(full, true));
    else if (entry.isFile() && /\.ya?ml$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

// JSON has no NaN or infinities, so ajv's `number` excludes them; YAML's .nan/.inf become the strings "nan"/"inf"/
// "-inf", which a manifest may also write and which mean the same floats. Aliased nodes are shared objects: each is
// visited once.
function jsonSafe(node, seen = new Set()) {
  if (node === null || typeof node !== "object" || seen.has(node)) return node;
  seen.add(node);
  for (const key of Object.keys(node)) {
    const v = node[key];
    if (typeof v === "number" && !Number.isFinite(v)) node[key] = Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf";
    else jsonSafe(v, seen);
  }
  return node;
}

// Returns null when accepted, else a one-line reason.
function check(file) {
  let doc;
  try {
    // YAML text is Unicode: invalid UTF-8 is rejected, not silently replaced with U+FFFD as readFileSync would.
    const text = new TextDecoder("utf-8", { fatal: true }).decode(fs.readFileSync(file));
    doc = yaml.load(text, { schema: YAML_SCHEMA, filename: file });
  } catch (e) {
    return "YAML: " + String(e.message).split("\n")[0];
  }
  if (typeof doc === "number" && !Number.isFinite(doc)) doc = String(doc);
  if (validate(jsonSafe(doc))) return null;
  return validate.errors
    .slice(0, 3)
    .map((e) => `${e.instancePath || "/"} ${e.message}${e.params && e.params.additionalProperty ? " (" + e.params.additionalProperty + ")" : ""}`)
    .join("; ");
}

let passed = 0;
let failed = 0;
function expect(file, wantAccepted) {
  const reason = check(file);
  const ok = wantAccepted ? reason === null : reason !== null;
  if (ok) {
    passed++;
    if (!wantAccepted && process.env.VERBOSE) console.log(`ok   rejected ${file}: ${reason}`);
  } else {
    failed++;
    console.log(wantAccepted ? `FAIL ${file} should be accepted: ${reason}` : `FAIL ${file} should be rejected`);
  }
}

const good = [
  ...yamlFiles(fixturesDir, false),
  // The loader's rule: every *.yaml / *.yml but the marker registry and status configs (opcheck.yaml,
  // opcheck.<anything>.yaml) is a manifest.
  // torch-spyre's v2 test_suite_config files (the shipped module config template) are torch-spyre's format, read
  // by src/manifest/v2_config.cpp: this schema is opcheck's own manifest format.
  ...yamlFiles(manifestsDir, true).filter((f) => !/^test_suite_config:/m.test(fs.readFileSync(f, "utf8"))).filter((f) => {
    const name = path.basename(f);
    return name !== "markers.yaml" && !name.startsWith("opcheck.");
  }),
  ...(goodDir ? yamlFiles(goodDir, true) : []),
];
if (yamlFiles(fixturesDir, false).length === 0) {
  console.log(`FAIL no fixture manifests in ${fixturesDir}`);
  failed++;
}
for (const f of good) expect(f, true);

const bad = yamlFiles(badDir, true);
if (bad.length < 35) {
  console.log(`FAIL expected at least 35 bad manifests in ${badDir}, found ${bad.length}`);
  failed++;
}
for (const f of bad) {
  const name = path.basename(f);
  if (name in BEYOND_SCHEMA) {
    // Still must be well-formed YAML that the schema accepts; otherwise the entry is stale.
    if (check(f) === null) passed++;
    else {
      failed++;
      console.log(`FAIL ${f} is listed as beyond the schema but the schema rejects it: drop it from BEYOND_SCHEMA`);
    }
    continue;
  }
  expect(f, false);
}
for (const name of Object.keys(BEYOND_SCHEMA))
  if (!bad.some((f) => path.basename(f) === name)) {
    failed++;
    console.log(`FAIL BEYOND_SCHEMA names ${name}, which is not in ${badDir}`);
  }

console.log(`schema: ${good.length} good and ${bad.length} bad manifests checked (${Object.keys(BEYOND_SCHEMA).length} beyond JSON Schema)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
