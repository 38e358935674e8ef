// Real consumers of opcheck's reports: an npm JUnit parser reads the XML, Ajv (JSON Schema 2020-12) checks the
// metrics file against schemas/metrics.schema.json. run.sh writes the files with report_sample first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'junit2json';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const dir = process.env.OPCHECK_REPORT_OUT;
const schemaPath = process.env.OPCHECK_METRICS_SCHEMA;
if (!dir || !schemaPath) throw new Error('run through run.sh: OPCHECK_REPORT_OUT and OPCHECK_METRICS_SCHEMA are unset');

const read = (name) => readFileSync(`${dir}/${name}`, 'utf8');
const prop = (node, name) => (node.properties ?? []).find((p) => p.name === name)?.value;

test('junit2json reads one suite for the run with pytest counts, models as classnames', async () => {
  const doc = await parse(read('sample.xml'));
  const suites = doc.testsuite;
  assert.deepEqual(suites.map((s) => s.name), ['opcheck']);
  const [suite] = suites;
  assert.equal(suite.tests, 10);
  assert.equal(suite.failures, 3);
  assert.equal(suite.errors, 1);
  assert.equal(suite.skipped, 2);
  assert.equal(suite.hostname, 'ci-runner-1');
  assert.equal(prop(suite, 'device_name'), 'loopback');
  assert.deepEqual(suite.testcase.map((c) => `${c.classname}::${c.name}`),
    ['llama::add_f16', 'llama::add_f16_again', 'llama::mul', 'llama::softmax', 'llama::sdpa', 'llama::silu',
      'llama::neg', 'granite::add', 'granite::linear', 'granite::cat']);
});

test('junit2json sees failures, errors, skips, xfails and xpasses as pytest writes them', async () => {
  const doc = await parse(read('sample.xml'));
  const byName = Object.fromEntries(doc.testsuite.flatMap((s) => s.testcase).map((c) => [`${c.classname}::${c.name}`, c]));
  const mul = byName['llama::mul'];
  assert.equal(mul.failure[0].message, 'Tensor-likes are not close!\nrepro: opcheck repro llama::mul');
  assert.equal(mul.failure[0].type, 'INCORRECT_RESULT');
  assert.match(mul.failure[0].inner, /Mismatched elements: 3 \/ 6/);
  assert.equal(mul['system-err'][0], 'warning: <fallback> & "slow" path \\x1b[31mred\\x1b[0m\n');
  assert.equal(prop(mul, 'max_abs_diff'), 0.5);
  assert.equal(byName['llama::softmax'].error[0].type, 'FAILED_INPUT');
  assert.equal(byName['llama::sdpa'].skipped[0].message, 'not supported on this device');
  assert.equal(byName['llama::silu'].skipped[0].message, 'known silu rounding bug');
  assert.equal(byName['llama::neg'].failure[0].message, '[XPASS(strict)] flaky neg');
  assert.equal(byName['granite::linear'].failure, undefined);
  assert.equal(prop(byName['granite::add'], 'deduplicated_from'), 'llama::add_f16');
});

function validator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv.compile(JSON.parse(readFileSync(schemaPath, 'utf8')));
}

for (const name of ['sample.json', 'parity.json', 'empty.json', 'verdicts.json']) {
  test(`${name} validates against metrics.schema.json`, () => {
    const validate = validator();
    const ok = validate(JSON.parse(read(name)));
    assert.ok(ok, JSON.stringify(validate.errors, null, 2));
  });
}

test('the schema rejects what opcheck would never write', () => {
  const validate = validator();
  const good = JSON.parse(read('sample.json'));
  const bad = (mutate) => {
    const doc = structuredClone(good);
    mutate(doc);
    return validate(doc);
  };
  assert.equal(bad((d) => { d.cases[0].outcome = 'pased'; }), false);
  assert.equal(bad((d) => { d.cases[2].figures.pcc = 'nan'; }), false);
  assert.equal(bad((d) => { delete d.totals.xpassed; }), false);
  assert.equal(bad((d) => { d.pass_rate.overall = 1.5; }), false);
  assert.equal(bad((d) => { d.stages.PASSING = 1; }), false);
  assert.equal(bad((d) => { d.dedupe.extra = 1; }), false);
  assert.equal(bad((d) => { d.time.slowest = Array(21).fill(d.time.slowest[0]); }), false);
  assert.equal(bad(() => {}), true);
});

test('junit2json reads not_supported as a failure of type NOT_SUPPORTED carrying the call and the repro command', async () => {
  const doc = await parse(read('verdicts.xml'));
  const byName = Object.fromEntries(doc.testsuite.flatMap((s) => s.testcase).map((c) => [`${c.classname}::${c.name}`, c]));
  const ns = byName['granite::mul_unsupported'];
  assert.equal(ns.failure[0].type, 'NOT_SUPPORTED');
  assert.equal(prop(ns, 'outcome'), 'not_supported');
  assert.match(ns.failure[0].message, /^NotImplementedError: Could not run 'aten::mul.Tensor'.*\ncall: torch\.mul\(bf16\[1,32,64\], bf16\[1,32,64\]\)\nrepro: opcheck repro granite::mul_unsupported$/);
  assert.match(byName['llama::mul'].failure[0].message, /\nworst element at \[1, 2\]: device 1\.5, reference 1\n/);
  const m = JSON.parse(read('verdicts.json'));
  assert.equal(m.totals.not_supported, 1);
  assert.equal(m.run.warning_count, 1);
});
