// The HTML report as a reader sees it: Debian's headless Chromium (driven by playwright-core) opens the pages that
// `opcheck report` wrote in run.sh, and every figure on them is checked against the metrics JSON they came from.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const dir = process.env.OPCHECK_HTML_OUT;
const artifacts = process.env.OPCHECK_ARTIFACTS;
const executablePath = process.env.OPCHECK_CHROMIUM;
const opcheck = process.env.OPCHECK_BIN;
// The repository's own fixtures in torch-spyre's dialects (test/fixtures/make_fixtures.py).
const ownFixtures = join(import.meta.dirname, '..', 'fixtures');
if (!dir || !artifacts || !executablePath || !opcheck) throw new Error('run through run.sh: OPCHECK_HTML_OUT, OPCHECK_ARTIFACTS, OPCHECK_CHROMIUM or OPCHECK_BIN is unset');

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
// The hand-built runs use the default policy: not_supported fails them, as every strict xpass does.
const FAILING = new Set(['failed', 'error', 'xpassed', 'not_supported']);
const COUNT_KEYS = { passed: 'passed', failed: 'failed', not_supported: 'not_supported', error: 'errors', xpassed: 'xpassed', xfailed: 'xfailed', skipped: 'skipped' };
const SOURCES = ['manifests', 'v2_configs', 'traces', 'opinfo'];
const pct = (rate) => (rate === null ? 'n/a' : `${(rate * 100).toFixed(1)}%`);
// What a metrics number becomes in the page's data-sort attributes: JSON spells NaN and infinities as strings.
const sortKey = (v) => (v === null || v === 'NaN' ? '' : v === 'Infinity' ? 'Infinity' : v === '-Infinity' ? '-Infinity' : v);
const sameNumber = (attr, v) => {
  const want = sortKey(v);
  if (want === '' || typeof want === 'string') return attr === want;
  return Number(attr) === want;
};

let browser;
before(async () => {
  // The machine has no network: nothing may try to reach it. playwright-core starts Chromium with a fresh temporary
  // --user-data-dir of its own for every launch.
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
after(async () => { await browser?.close(); });

// Opens a page and records everything that would mean it is broken: console errors, uncaught exceptions, and any
// request that leaves the file itself.
async function open(name, { javaScriptEnabled = true } = {}) {
  const context = await browser.newContext({ javaScriptEnabled, viewport: { width: 1360, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  const url = `file://${dir}/${name}`;
  page.on('request', (r) => { if (r.url() !== url && !r.url().startsWith('data:')) problems.push(`request: ${r.url()}`); });
  await page.goto(url);
  await page.waitForLoadState('load');
  return { page, problems, close: () => context.close() };
}

const kpi = (page, id) => page.$eval(`[data-kpi="${id}"]`, (el) => ({ value: el.dataset.value, text: el.querySelector('.kpi-value').textContent }));

// Rows of a table as {attrs, cells: {data-col: data-sort or text}, text: {data-col: text}, hidden}.
const rows = (page, selector) => page.$$eval(`${selector} tbody tr`, (trs) => trs.map((tr) => ({
  attrs: { ...tr.dataset },
  cls: tr.className,
  hidden: tr.hidden,
  cells: Object.fromEntries([...tr.cells].filter((c) => c.dataset.col).map((c) => [c.dataset.col, c.hasAttribute('data-sort') ? c.dataset.sort : c.textContent.trim()])),
  text: Object.fromEntries([...tr.cells].filter((c) => c.dataset.col).map((c) => [c.dataset.col, c.textContent.trim()])),
})));

function checkCountsRow(row, counts, what) {
  assert.equal(row.cells.total, String(counts.total), `${what}: cases`);
  for (const [col, key] of Object.entries(COUNT_KEYS)) assert.equal(row.cells[col], String(counts[key]), `${what}: ${col}`);
  assert.ok(sameNumber(row.cells.pass_rate, counts.pass_rate), `${what}: pass rate ${row.cells.pass_rate} vs ${counts.pass_rate}`);
  assert.equal(row.text.pass_rate, pct(counts.pass_rate), `${what}: pass rate text`);
}

// Every figure the page shows, against the metrics file it was written from.
async function checkAgainstMetrics(page, m) {
  const rate = await kpi(page, 'pass-rate');
  assert.equal(rate.text, pct(m.pass_rate.overall));
  assert.ok(sameNumber(rate.value, m.pass_rate.overall));
  assert.equal((await kpi(page, 'total')).text, String(m.totals.total));
  for (const [id, key] of Object.entries(COUNT_KEYS)) assert.equal((await kpi(page, id)).text, String(m.totals[key]), `tile ${id}`);

  const models = await rows(page, '#model-table');
  assert.deepEqual(models.map((r) => r.attrs.model), Object.keys(m.pass_rate.per_model));
  for (const r of models) {
    checkCountsRow(r, m.pass_rate.per_model[r.attrs.model], `model ${r.attrs.model}`);
    assert.equal(r.cells.ops, String(m.coverage.per_model[r.attrs.model].ops));
    assert.equal(r.cells.signatures, String(m.coverage.per_model[r.attrs.model].signatures));
    assert.equal(r.cells.unique, String(m.dedupe.per_model[r.attrs.model].unique));
  }
  const bars = await page.$$eval('#model-chart g.bar', (gs) => gs.map((g) => ({ model: g.dataset.model, width: g.querySelector('rect.rate')?.getAttribute('width') ?? '0' })));
  assert.deepEqual(bars.map((b) => b.model), Object.keys(m.pass_rate.per_model));
  for (const b of bars) {
    const r = m.pass_rate.per_model[b.model].pass_rate ?? 0;
    assert.ok(Math.abs(Number(b.width) - 560 * r) < 0.01, `bar of ${b.model}: width ${b.width} for rate ${r}`);
  }

  const ops = await rows(page, '#op-table');
  assert.deepEqual(ops.map((r) => r.attrs.op).sort(), Object.keys(m.pass_rate.per_op).sort());
  for (const r of ops) checkCountsRow(r, m.pass_rate.per_op[r.attrs.op], `op ${r.attrs.op}`);

  // In run order, the not-supported cases after the others (the page leads with wrong results and errors).
  const failing = [...m.cases.filter((c) => FAILING.has(c.outcome) && c.outcome !== 'not_supported'),
    ...m.cases.filter((c) => c.outcome === 'not_supported' && FAILING.has(c.outcome))];
  const failures = await rows(page, '#failure-table');
  assert.deepEqual(failures.map((r) => r.attrs.id), failing.map((c) => c.id));
  failures.forEach((r, i) => {
    const c = failing[i];
    assert.equal(r.attrs.outcome, c.outcome);
    assert.equal(r.text.stage, c.stage);
    for (const f of ['max_abs_diff', 'max_rel_diff', 'pcc'])
      assert.ok(sameNumber(r.cells[f], c.figures[f]), `${c.id} ${f}: ${r.cells[f]} vs ${c.figures[f]}`);
    assert.equal(r.text.mismatched, c.figures.total > 0 ? `${c.figures.mismatched} / ${c.figures.total}` : '—');
  });

  const en = m.coverage.enabled_ops;
  assert.ok(sameNumber((await kpi(page, 'enabled-coverage')).value, en.percent));
  if (en.enabled > 0) {
    assert.equal((await kpi(page, 'untested')).text, String(en.untouched_ops.length));
    const chips = await page.$$eval('#untested-ops .chip', (cs) => cs.map((c) => c.textContent));
    assert.deepEqual(chips, en.untouched_ops);
  }
  // Each exercised enabled op: its cases by source (adding up to its cases) and pass rate, as the metrics file has them.
  const perOp = en.per_op ?? {};
  const enabledRows = await rows(page, '#enabled-op-table');
  assert.deepEqual(enabledRows.map((r) => r.attrs.op).sort(), Object.keys(perOp).sort());
  for (const r of enabledRows) {
    const t = perOp[r.attrs.op];
    assert.equal(r.cells.cases, String(t.cases), `enabled op ${r.attrs.op}: cases`);
    let sum = 0;
    for (const s of SOURCES) {
      assert.equal(r.cells[s], String(t.sources[s]), `enabled op ${r.attrs.op}: ${s}`);
      sum += t.sources[s];
    }
    assert.equal(sum, t.cases, `enabled op ${r.attrs.op}: the sources add up to its cases`);
    assert.ok(sameNumber(r.cells.pass_rate, t.pass_rate), `enabled op ${r.attrs.op}: pass rate`);
    assert.equal(r.text.pass_rate, pct(t.pass_rate));
  }
  assert.equal((await kpi(page, 'ops')).text, String(m.coverage.ops));
  assert.equal((await kpi(page, 'signatures')).text, String(m.coverage.signatures));
  assert.equal((await kpi(page, 'resolved-ops')).text, String(m.coverage.resolved_ops.length));

  assert.equal((await kpi(page, 'occurrences')).text, String(m.dedupe.occurrences));
  assert.equal((await kpi(page, 'unique')).text, String(m.dedupe.unique));
  assert.equal((await kpi(page, 'served')).text, String(m.dedupe.duplicates_served));
  assert.ok(sameNumber((await kpi(page, 'ratio')).value, m.dedupe.ratio));

  const slow = await rows(page, '#slow-table');
  assert.deepEqual(slow.map((r) => r.attrs.id), m.time.slowest.map((s) => s.id));
  slow.forEach((r, i) => assert.ok(sameNumber(r.cells.total_ms, m.time.slowest[i].total_ms)));
}

// Regressions between two metrics files as `opcheck diff` defines them, recomputed independently.
function regressions(older, newer) {
  const bad = (o) => o === 'failed' || o === 'error';
  const old = new Map(older.cases.map((c) => [c.id, c]));
  let n = 0;
  for (const c of newer.cases) {
    const o = old.get(c.id);
    if (!o || !bad(c.outcome)) continue;
    if (!bad(o.outcome) || o.stage !== c.stage) n++;
  }
  return n;
}

test('nightly fleet page: every figure matches the metrics JSON, no console errors, no requests', async () => {
  const m = readJson(`${dir}/fleet/night-7.json`);
  const { page, problems, close } = await open('fleet.html');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.js), 'ready', 'the inline script ran (CSP hash matches)');
  await checkAgainstMetrics(page, m);
  const header = await page.$eval('header.top', (h) => h.textContent);
  assert.ok(header.includes(m.run.host) && header.includes(m.run.started_at) && header.includes(m.run.device_name));
  await page.screenshot({ path: `${artifacts}/html-report.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await close();
  const html = readFileSync(`${dir}/fleet.html`, 'utf8');
  assert.doesNotMatch(html, /https?:\/\//, 'the page refers to nothing on the network');
  assert.equal((html.match(/<script/g) ?? []).length, 1);
});

test('trend: one row per night (the current file not twice), pass rates and regressions as diff finds them', async () => {
  const nights = readdirSync(`${dir}/fleet`).filter((f) => f.endsWith('.json')).map((f) => readJson(`${dir}/fleet/${f}`))
    .sort((a, b) => a.run.started_at.localeCompare(b.run.started_at));
  assert.equal(nights.length, 7);
  const { page, problems, close } = await open('fleet.html');
  const trend = await rows(page, '#trend-table');
  assert.equal(trend.length, 7, 'night-7.json sits in the history folder and is the current run: it must appear once');
  let regressedRuns = 0;
  trend.forEach((r, i) => {
    checkCountsRow(r, { ...nights[i].totals, pass_rate: nights[i].pass_rate.overall }, `night ${i + 1}`);
    if (i === 0) return;
    const want = regressions(nights[i - 1], nights[i]);
    assert.equal(r.cells.regressions, String(want), `night ${i + 1} regressions`);
    assert.equal(r.cls.includes('regressed'), want > 0, `night ${i + 1} highlighted`);
    const delta = (nights[i].pass_rate.overall - nights[i - 1].pass_rate.overall) * 100;
    assert.ok(Math.abs(Number(r.cells.delta) - delta) < 1e-9);
    if (want > 0) regressedRuns++;
  });
  // The fixture is built so that night 4 and the last night regress; the page must show both.
  assert.ok(Number(trend[3].cells.regressions) > 0 && Number(trend[6].cells.regressions) > 0);
  assert.equal(await page.$$eval('#trend-chart g.point.regression', (g) => g.length), regressedRuns);
  assert.equal(await page.$$eval('#trend-chart g.point', (g) => g.length), 7);
  assert.equal((await kpi(page, 'regressions')).text, String(regressions(nights[5], nights[6])));
  // The newest regressions are listed, open, case by case.
  const listed = await page.$$eval('details.reg[open] tbody tr', (trs) => trs.map((t) => t.dataset.id));
  assert.equal(listed.length, regressions(nights[5], nights[6]));
  assert.ok(listed.every((id) => id.includes('layer_norm')));
  assert.deepEqual(problems, []);
  await close();
});

test('sorting: a heading click sorts by its column, a second click reverses, blanks stay last', async () => {
  const { page, problems, close } = await open('fleet.html');
  const header = (table, label) => page.locator(`${table} thead th`, { hasText: new RegExp(`^${label}$`) });
  const column = async (table, col) => (await rows(page, table)).map((r) => r.cells[col]);
  const numeric = (vals) => vals.filter((v) => v !== '').map(Number);

  await header('#op-table', 'Pass rate').click();
  let rates = await column('#op-table', 'pass_rate');
  assert.equal(await header('#op-table', 'Pass rate').getAttribute('aria-sort'), 'ascending');
  assert.deepEqual(numeric(rates), [...numeric(rates)].sort((a, b) => a - b));
  assert.ok(rates.indexOf('') === -1 || rates.slice(rates.indexOf('')).every((v) => v === ''), 'n/a rows last');
  await header('#op-table', 'Pass rate').click();
  rates = await column('#op-table', 'pass_rate');
  assert.equal(await header('#op-table', 'Pass rate').getAttribute('aria-sort'), 'descending');
  assert.deepEqual(numeric(rates), [...numeric(rates)].sort((a, b) => b - a));

  await header('#op-table', 'Op').click();
  const names = await column('#op-table', 'op');
  assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b, undefined, { numeric: true })));

  await header('#failure-table', 'max_abs_diff').click();
  await header('#failure-table', 'max_abs_diff').click();
  const diffs = await column('#failure-table', 'max_abs_diff');
  assert.deepEqual(numeric(diffs), [...numeric(diffs)].sort((a, b) => b - a));
  assert.ok(numeric(diffs).length >= 2, 'the fixture has several failures with figures');
  assert.deepEqual(problems, []);
  await close();
});

test('filtering: text and stage/outcome selects show exactly the matching failures, with a count', async () => {
  const m = readJson(`${dir}/fleet/night-7.json`);
  const failing = m.cases.filter((c) => FAILING.has(c.outcome));
  const { page, problems, close } = await open('fleet.html');
  const visible = async () => (await rows(page, '#failure-table')).filter((r) => !r.hidden).map((r) => r.attrs.id);
  const count = () => page.textContent('[data-count-for="failure-table"]');
  assert.equal(await count(), String(failing.length));

  await page.fill('input[data-filter-table="failure-table"]', 'layer_norm');
  const byText = failing.filter((c) => [c.id, c.op, c.resolved_op, c.message, c.captured_stderr].join(' ').includes('layer_norm'));
  assert.ok(byText.length > 0);
  assert.deepEqual(await visible(), byText.map((c) => c.id));
  assert.equal(await count(), `${byText.length} of ${failing.length}`);

  await page.fill('input[data-filter-table="failure-table"]', '');
  await page.selectOption('select[data-filter-attr="data-stage"]', 'INCORRECT_RESULT');
  const byStage = failing.filter((c) => c.stage === 'INCORRECT_RESULT');
  assert.deepEqual(await visible(), byStage.map((c) => c.id));
  await page.selectOption('select[data-filter-attr="data-outcome"]', 'xpassed');
  assert.deepEqual(await visible(), failing.filter((c) => c.stage === 'INCORRECT_RESULT' && c.outcome === 'xpassed').map((c) => c.id));
  await page.selectOption('select[data-filter-attr="data-stage"]', '');
  assert.deepEqual(await visible(), failing.filter((c) => c.outcome === 'xpassed').map((c) => c.id));

  await page.fill('input[data-filter-table="op-table"]', 'torch.nn.functional');
  const ops = (await rows(page, '#op-table')).filter((r) => !r.hidden).map((r) => r.attrs.op).sort();
  assert.deepEqual(ops, Object.keys(m.pass_rate.per_op).filter((o) => o.includes('torch.nn.functional')).sort());
  assert.deepEqual(problems, []);
  await close();
});

test('sample run: the hand-checked figures of test/report appear as stated', async () => {
  const m = readJson(`${dir}/sample.json`);
  const { page, problems, close } = await open('sample.html');
  await checkAgainstMetrics(page, m);
  assert.equal((await kpi(page, 'pass-rate')).text, '50.0%');
  const models = Object.fromEntries((await rows(page, '#model-table')).map((r) => [r.attrs.model, r.text.pass_rate]));
  assert.deepEqual(models, { granite: '66.7%', llama: '40.0%' });
  const f = Object.fromEntries((await rows(page, '#failure-table')).map((r) => [r.attrs.id, r]));
  assert.deepEqual(Object.keys(f), ['llama::mul', 'llama::softmax', 'llama::neg', 'granite::cat']);
  assert.equal(f['llama::mul'].text.max_abs_diff, '0.5');
  assert.equal(f['llama::mul'].text.max_rel_diff, 'inf');
  assert.equal(f['llama::mul'].text.pcc, 'nan');
  assert.equal(f['granite::cat'].text.stage, 'CRASHED');
  assert.deepEqual(await page.$$eval('#untested-ops .chip', (cs) => cs.map((c) => c.textContent)), ['aten::cos', 'aten::sin']);
  // The enabled ops by source, worst first: mul (failed) and neg (a strict xpass, from a trace) at 0%, then the
  // passing ones; linear's OpInfo sample reached both t and addmm.
  const en = Object.fromEntries((await rows(page, '#enabled-op-table')).map((r) => [r.attrs.op, r.text]));
  assert.deepEqual(Object.keys(en).slice(0, 2).sort(), ['aten::mul.Tensor', 'neg']);
  assert.deepEqual([en['aten::add.Tensor'].cases, en['aten::add.Tensor'].manifests, en['aten::add.Tensor'].pass_rate], ['3', '3', '100.0%']);
  assert.deepEqual([en['aten::addmm'].opinfo, en['aten::t'].opinfo, en['aten::t'].manifests], ['1', '1', '0']);
  assert.deepEqual([en.neg.traces, en.neg.pass_rate], ['1', '0.0%']);
  assert.equal((await kpi(page, 'dedupe-ratio')).text, '1.25×');
  assert.equal(await page.$('#trend'), null, 'no history, no trend section');
  // Folded details hold the whole message and the stderr, terminal escapes made visible.
  const details = await page.$eval('tr[data-id="llama::mul"] details', (d) => d.textContent);
  assert.match(details, /Mismatched elements: 3 \/ 6/);
  assert.ok(details.includes('\\x1b[31mred'));
  await page.screenshot({ path: `${artifacts}/html-report-sample.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await close();
});

test('<script> and markup in case ids, messages, stderr and run facts stay inert text', async () => {
  const m = readJson(`${dir}/hostile.json`);
  const { page, problems, close } = await open('hostile.html');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no injected code ran');
  assert.equal(await page.evaluate(() => document.scripts.length), 1, 'only opcheck\'s own script element exists');
  // None of the markup in the run became elements or handlers (the page's own <b>/<i> hold no run text).
  assert.equal(await page.evaluate(() => document.querySelectorAll('img, [onerror], [onload], [onmouseover]').length), 0);
  assert.equal(await page.evaluate(() => [...document.querySelectorAll('b, i')].filter((e) => /^(aten::)?evil$/.test(e.textContent)).length), 0);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.js), 'ready');
  const c = m.cases[0];
  const failures = await rows(page, '#failure-table');
  assert.deepEqual(failures.map((r) => r.attrs.id), [c.id], 'the case id round-trips exactly through the attribute');
  assert.ok(failures[0].text.message.startsWith("<script>window.__pwned='message'</script> & more"));
  assert.ok(failures[0].text.id.includes("<script>window.__pwned='name'</script>"));
  const details = await page.$eval('#failure-table details', (d) => d.textContent);
  assert.ok(details.includes("</pre></details></td></tr></table><script>window.__pwned='message2'</script>"));
  assert.ok(details.includes('bad utf-8 \\xff\\xfe then \\x1b[31mred'), 'invalid UTF-8 and escapes shown as \\x..');
  assert.ok((await page.title()).includes('<img src=x onerror='));
  assert.ok((await page.textContent('#interrupted')).includes("--maxfail <script>window.__pwned='stop'</script>"));
  assert.deepEqual(await page.$$eval('#untested-ops .chip', (cs) => cs.map((x) => x.textContent)), [m.coverage.enabled_ops.untouched_ops[0]]);
  const regressed = await page.$$eval('details.reg tbody tr', (trs) => trs.map((t) => t.dataset.id));
  assert.deepEqual(regressed, [c.id]);
  await checkAgainstMetrics(page, m);
  assert.deepEqual(problems, []);
  await close();
});

test('without JavaScript the page still shows every table and chart; the filter boxes stay hidden', async () => {
  const m = readJson(`${dir}/fleet/night-7.json`);
  const { page, problems, close } = await open('fleet.html', { javaScriptEnabled: false });
  assert.equal(await page.evaluate(() => document.documentElement.dataset.js), undefined, 'the page script did not run');
  assert.equal(await page.locator('#model-chart g.bar').count(), Object.keys(m.pass_rate.per_model).length);
  assert.ok(await page.locator('#trend-chart').isVisible());
  assert.ok(await page.locator('#outcome-chart').isVisible());
  assert.equal(await page.locator('#op-table tbody tr:visible').count(), Object.keys(m.pass_rate.per_op).length);
  assert.equal(await page.locator('[data-js-controls]:visible').count(), 0);
  assert.deepEqual(problems, []);
  await close();
});

test('empty run: no cases, rates n/a, no errors', async () => {
  const { page, problems, close } = await open('empty.html');
  assert.equal((await kpi(page, 'pass-rate')).text, 'n/a');
  assert.equal((await kpi(page, 'total')).text, '0');
  assert.match(await page.textContent('#models'), /No cases ran/);
  assert.match(await page.textContent('#summary-line'), /no tests ran/);
  assert.deepEqual(problems, []);
  await close();
});

test('opcheck report: unreadable inputs give a located error and exit 2, a bad history file is skipped with its reason, a missing --html is a usage error', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'opcheck-html-'));
  const run = (...args) => spawnSync(opcheck, ['report', ...args], { encoding: 'utf8' });
  let r = run(`${tmp}/missing.json`, '--html', `${tmp}/out.html`);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /missing\.json/);

  r = run(`${dir}/sample.json`, '--history', `${dir}/sample.json`, '--html', `${tmp}/out.html`);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /sample\.json: error: not a folder/);
  assert.match(r.stderr, /Fix:/);

  mkdirSync(`${tmp}/hist`);
  writeFileSync(`${tmp}/hist/notes.json`, '{"format": "something-else"}');
  r = run(`${dir}/sample.json`, '--history', `${tmp}/hist`, '--html', `${tmp}/out.html`);
  assert.equal(r.status, 0);
  assert.match(r.stderr, /warning: skipped \S*hist\/notes\.json: not a readable metrics file/);
  assert.match(r.stdout, /1 file of \S*hist skipped/);

  r = run(`${dir}/sample.json`);
  assert.equal(r.status, 4);
  assert.match(r.stderr, /--html/);

  r = run(`${dir}/sample.json`, '--html', `${tmp}/no-such-dir/out.html`);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no-such-dir/);
});

// torch-spyre's v2 config: every entry is `mode: xfail` (non-strict) and passes on the loopback. Each is a correct
// result, so the headline is not "PASS RATE 0.0%" in red (issue 22), and it says what the metrics say.
test('a v2 config whose non-strict xfails all pass headlines its pass rate in green', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'opcheck-v2-'));
  const r = spawnSync(opcheck, ['run', '--manifests', join(ownFixtures, 'torch-spyre-v2', 'tiny-gpt.yaml'), '--device',
    'loopback', '-q', '--html', `${tmp}/v2.html`, '--metrics-json', `${tmp}/v2.json`, '--artifact-dir', `${tmp}/art`],
  { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 900000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const m = readJson(`${tmp}/v2.json`);
  assert.ok(m.totals.xpassed > 0 && m.totals.passed === 0, JSON.stringify(m.totals));
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const page = await context.newPage();
  await page.goto(`file://${tmp}/v2.html`);
  const tile = await page.$eval('[data-kpi="pass-rate"]', (el) => ({
    text: el.querySelector('.kpi-value').textContent, cls: el.className, color: getComputedStyle(el.querySelector('.kpi-value')).color,
  }));
  assert.equal(tile.text, pct(m.pass_rate.overall));
  assert.notEqual(tile.text, '0.0%');
  assert.ok(m.pass_rate.overall >= 0.95, `pass rate ${m.pass_rate.overall}`);
  assert.equal(tile.cls, 'kpi good');
  assert.notEqual(tile.color, 'rgb(198, 40, 40)', 'the headline is not red');
  await context.close();
});

// A reader's laptop: every page fits a 1280 px window (no sideways scroll), and a failures table leads with the wrong
// results and errors, the not-supported rows (known gaps, often many) after them.
test('every page fits 1280 px, and its failures come before its not-supported cases', async () => {
  let sawBoth = false;
  for (const name of ['fleet.html', 'sample.html', 'hostile.html', 'empty.html']) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`file://${dir}/${name}`);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 1280, `${name}: ${width} px wide in a 1280 px window`);
    const outcomes = await page.$$eval('#failure-table tbody tr', (trs) => trs.map((t) => t.dataset.outcome));
    const first = outcomes.indexOf('not_supported');
    if (first >= 0) assert.ok(outcomes.slice(first).every((o) => o === 'not_supported'), `${name}: ${outcomes.join(' ')}`);
    sawBoth ||= first > 0;
    await context.close();
  }
  assert.ok(sawBoth, 'no page has failures and not-supported cases both: the order was not checked');
});

// Root causes (issue 23): the torch-spyre fixture on the loopback with a biased mul and a throwing rsqrt has two
// failure groups; the page lists exactly the metrics' groups, in order, with their counts, ops and examples.
test('failure groups: the two faults of a real run are two rows, as the metrics file has them', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'opcheck-groups-'));
  const r = spawnSync(opcheck, ['run', '--manifests', join(ownFixtures, 'torch-spyre'), '--device', 'loopback', '-k',
    'torch.mul or torch.rsqrt', '-q', '--tb', 'no', '--html', `${tmp}/g.html`, '--metrics-json', `${tmp}/g.json`,
    '--artifact-dir', `${tmp}/art`],
  { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', OPCHECK_LOOPBACK_FAULTS: 'aten::mul.Tensor=bias:1e-1;aten::rsqrt=throw' }, timeout: 900000 });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const m = readJson(`${tmp}/g.json`);
  // tiny-gpt's three mul calls and tiny-llama's one; each model's rsqrt.
  assert.deepEqual(m.failure_groups.map((g) => [g.op, g.count]), [['aten::mul.Tensor', 4], ['aten::rsqrt', 2]]);
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const page = await context.newPage();
  await page.goto(`file://${tmp}/g.html`);
  assert.equal(await page.$eval('#groups h2 .count', (el) => el.textContent), '2');
  const groups = await rows(page, '#group-table');
  assert.deepEqual(groups.map((g) => g.attrs.signature), m.failure_groups.map((g) => g.signature));
  groups.forEach((g, i) => {
    const want = m.failure_groups[i];
    assert.equal(g.text.rank, String(i + 1));
    assert.equal(g.text.count, String(want.count));
    assert.equal(g.text.unique, String(want.unique));
    assert.equal(g.text.stage, want.stage);
    assert.equal(g.text.op, want.op);
    assert.equal(g.text.example, want.example);
    assert.ok(g.text.spans.includes(want.ops.join(', ')), g.text.spans);
  });
  assert.ok(await page.isVisible('#group-table'));
  // The groups come before the failures, case by case.
  assert.ok(await page.$eval('#groups', (el) => !!(el.compareDocumentPosition(document.querySelector('#failures')) & Node.DOCUMENT_POSITION_FOLLOWING)));
  await page.locator('#groups').screenshot({ path: join(artifacts, 'html-failure-groups.png') });
  await context.close();
});
