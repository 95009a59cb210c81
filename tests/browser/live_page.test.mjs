#!/usr/bin/env node
// Headless-browser test of the live page of `lenlab serve` (web/), and optionally of a report.html.
//
//   node tests/browser/live_page.test.mjs --lenlab build/release/lenlab [--report figures/report.html]
//
// Starts `lenlab serve --port 0` on a fresh output folder, drives the page in headless Chromium
// through puppeteer-core, and fails on any console error or uncaught exception in the page.
// Exit status: 0 all passed, 1 a test failed, 77 skipped (no Chromium, or puppeteer-core not
// installed), the code ctest's SKIP_RETURN_CODE understands.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { testProjector, testSixteenRuns } from './classroom_checks.mjs';
import { testClassroomRoles } from './classroom_roles.mjs';
import { check, fill, getJson, sleep, snapshot, startServe, submit, waitForFile } from './page_helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RUNS_TIMEOUT_MS = 120_000;    // two small runs; generous for a sanitizer build
const WATCHDOG_MS = 240_000;        // the whole test, whatever hangs

// --- arguments and skips --------------------------------------------------------------------

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    if (flag !== '--lenlab' && flag !== '--report') usage(`unknown argument '${argv[i]}'`);
    const value = inline ?? argv[++i];
    if (!value) usage(`${flag} needs a value`);
    args[flag.slice(2)] = value;
  }
  if (!args.lenlab) usage('--lenlab is required');
  return args;
}

function usage(why) {
  console.error(`live_page.test.mjs: ${why}\nusage: node live_page.test.mjs --lenlab PATH [--report PATH]`);
  process.exit(1);
}

function skip(why) {
  console.log(`skipped: ${why}`);
  process.exit(77);
}

const args = parseArgs(process.argv.slice(2));
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(chromium)) skip(`no Chromium at ${chromium} (install the chromium package, or set $CHROMIUM)`);
if (!fs.existsSync(path.join(HERE, 'node_modules', 'puppeteer-core'))) {
  skip('tests/browser/node_modules/puppeteer-core is missing: run scripts/install-deps.sh');
}
// Imported only now, so that a missing module is a skip and not a crash.
const { default: puppeteer } = await import('puppeteer-core');

// --- the server -------------------------------------------------------------------------------

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lenlab-browser-'));
let served = null;   // page_helpers.mjs's startServe: the default server, on 127.0.0.1
const corpusDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lenlab-corpus-'));   // its offered corpus

for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));
setTimeout(() => { console.log(`not ok - the whole test took over ${WATCHDOG_MS / 1000} s`); process.exit(1); }, WATCHDOG_MS).unref();

// --- the page's errors -------------------------------------------------------------------------

// Console errors and uncaught exceptions of a page; each test checks the ones since it began.
function watchErrors(page) {
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const where = msg.location() && msg.location().url;
    // Chrome logs every 4xx/5xx answer as "Failed to load resource". A 400 to POST /api/runs is the
    // API's way to report a bad field, which test 1 provokes on purpose; any other one counts.
    if (/status of 400/.test(msg.text()) && where && new URL(where).pathname === '/api/runs') return;
    errors.push(`console error: ${msg.text()}${where ? ` (${where})` : ''}`);
  });
  page.on('pageerror', (err) => errors.push(`uncaught exception: ${err.message}`));
  return errors;
}

// --- the tests ------------------------------------------------------------------------------------

async function testBadExpression(page) {
  await fill(page, { '#reparam': 'sqrt(x' });
  const { status, body } = await submit(page);
  check(status === 400, `POST /api/runs with reparam 'sqrt(x' answered HTTP ${status}, not 400: ${JSON.stringify(body)}`);
  const box = await page.waitForSelector('[data-error-for="reparam"].field-error', { visible: true, timeout: 5000 });
  const text = await box.evaluate((e) => e.textContent);
  check(text.includes('sqrt(x'), `the error under #reparam does not quote the expression: "${text}"`);
  return `a bad reparam expression: the error appears under #reparam ("${text.trim().slice(0, 70)}…")`;
}

// Every field of the form has a human label (not its setting's key), and at common screen sizes
// no label overlaps another label or any field, for each method's settings.
async function testLayout(page) {
  const sizes = [[1400, 1000], [1024, 768], [800, 600]];
  const methods = await page.$$eval('#method option', (os) => os.map((o) => o.value));
  let checked = 0;
  const problems = [];
  for (const [width, height] of sizes) {
    await page.setViewport({ width, height });
    for (const method of methods) {
      await page.select('#method', method);
      const found = await page.evaluate(() => {
        const box = (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, r: r.right, b: r.bottom }; };
        const visible = (e) => e.getClientRects().length > 0;
        const form = document.querySelector('#run-form');
        const labels = [...form.querySelectorAll('label')].filter(visible).map((e) => ({
          what: `label "${e.textContent.trim().replace(/\s+/g, ' ')}"`,
          // the words a student reads first: the label less its small hint
          text: [...e.childNodes].filter((n) => !(n.classList && n.classList.contains('hint'))).map((n) => n.textContent).join('').trim(),
          // its text's extent: a word wider than its column overflows the label's own box
          box: (() => { const r = document.createRange(); r.selectNodeContents(e); return box(r); })(),
        }));
        const fields = [...form.querySelectorAll('input, select')].filter(visible).map((e) => ({ what: `field #${e.id}`, box: box(e) }));
        return { labels, fields };
      });
      const overlap = (a, b) => Math.min(a.r, b.r) - Math.max(a.x, b.x) > 0.5 && Math.min(a.b, b.b) - Math.max(a.y, b.y) > 0.5;
      for (const label of found.labels) {
        if (!label.text || /_/.test(label.text)) problems.push(`${width}×${height}, method ${method}: ${label.what} is a setting's key, not a human label`);
      }
      const items = [...found.labels, ...found.fields];
      for (let i = 0; i < found.labels.length; i++) {
        for (let j = i + 1; j < items.length; j++) {
          if (overlap(found.labels[i].box, items[j].box)) {
            problems.push(`${width}×${height}, method ${method}: ${found.labels[i].what} overlaps ${items[j].what}`);
          }
        }
      }
      checked += found.labels.length;
    }
  }
  const overlaps = problems.filter((p) => p.includes(' overlaps '));
  check(problems.length === 0, `${problems.length - overlaps.length} labels that are keys, ${overlaps.length} overlaps, e.g.\n  ${[...overlaps.slice(0, 4), ...problems.slice(0, 2)].join('\n  ')}`);
  await page.select('#method', methods[0]);
  await page.setViewport({ width: 1280, height: 900 });
  return `the form's labels are human words and overlap nothing at ${sizes.map((s) => s.join('×')).join(', ')} with every method (${checked} labels checked)`;
}

async function testTwoRuns(page, base, downloads, errors) {
  const errorsBefore = errors.length;
  const settings = { '#task': 'length', '#pe': 'nope', '#reparam': 'identity', '#l_train': '5', '#l_test': '12', '#steps': '40' };
  if (await page.$('#method option[value="none"]')) settings['#method'] = 'none';
  await fill(page, settings);
  const first = await submit(page);
  check(first.status === 200, `run 1: HTTP ${first.status}: ${JSON.stringify(first.body)}`);
  await fill(page, { '#reparam': 'sqrt' });
  const second = await submit(page);
  check(second.status === 200, `run 2: HTTP ${second.status}: ${JSON.stringify(second.body)}`);
  const [n1, n2] = [first.body.number, second.body.number];
  check(Number.isInteger(n1) && Number.isInteger(n2) && n1 !== n2, `run numbers ${n1}, ${n2}`);

  // The last submit cleared test 1's error.
  check(await page.$eval('[data-error-for="reparam"]', (e) => e.hidden || e.textContent.trim() === ''),
    'the reparam error of the previous submit is still shown');

  // With --max-running 1, run 2 waits unless run 1 finished in the moment between the two clicks.
  const run1Then = await getJson(base, `/api/runs/${n1}`);
  if (second.body.state === 'queued') {
    check(Number.isInteger(second.body.queue_position) && second.body.queue_position >= 1,
      `run 2 is queued with queue_position ${JSON.stringify(second.body.queue_position)}`);
  } else {
    check(run1Then.state === 'completed', `run 2 started (${second.body.state}) while run 1 was ${run1Then.state}`);
  }

  // Watch the page until both runs are completed: the points must grow and the queue show.
  const seenPoints = [];
  let queueText = '';
  let pointsBeforeDone = 0;
  let overlap = null;
  const deadline = Date.now() + RUNS_TIMEOUT_MS;
  for (;;) {
    const snap = await snapshot(page);
    check(!snap.connection, `the page says: ${snap.connection}`);
    check(errors.length === errorsBefore, errors.slice(errorsBefore).join('\n'));   // fail fast
    const mine = snap.runs.filter((r) => r.number === n1 || r.number === n2);
    for (const r of mine) {
      check(r.state !== 'failed' && r.state !== 'diverged', `run ${r.number} ${r.state}: ${r.message}`);
      if (r.number === n2 && r.queue) queueText = r.queue;
    }
    const done = mine.length === 2 && mine.every((r) => r.state === 'completed');
    if (!done && snap.points > 0) pointsBeforeDone = Math.max(pointsBeforeDone, snap.points);
    if (seenPoints.at(-1) !== snap.points) seenPoints.push(snap.points);
    // The server never runs more than --max-running at once.
    const { runs } = await getJson(base, '/api/runs');
    const active = runs.filter((r) => r.state === 'training' || r.state === 'evaluating');
    if (active.length > 1) overlap = active.map((r) => r.number);
    if (done) break;
    check(Date.now() < deadline, `runs not completed within ${RUNS_TIMEOUT_MS / 1000} s: ${JSON.stringify(mine)}`);
    await sleep(100);
  }
  check(overlap === null, `runs ${overlap} trained at once with --max-running 1`);

  // Every drawable value of both runs is on the chart: 12 lengths each, the positive ones (log axis).
  const results = await Promise.all([n1, n2].map((n) => getJson(base, `/api/runs/${n}`)));
  for (const run of results) {
    const lengths = run.results.map((r) => r.length).join(',');
    check(lengths === '1,2,3,4,5,6,7,8,9,10,11,12', `run ${run.number} has results at lengths ${lengths}, not 1..12`);
    check(run.metric === 'mse', `run ${run.number}'s metric is ${run.metric}, not mse`);
  }
  const drawable = results.flatMap((r) => r.results).filter((r) => Number.isFinite(r.value) && r.value > 0).length;
  await page.waitForFunction((n) => Number(document.body.dataset.points) === n, { timeout: 5000 }, drawable)
    .catch(async () => { throw new Error(`${await page.evaluate(() => document.body.dataset.points)} points drawn, not ${drawable} (both runs)`); });
  check(drawable >= 20, `only ${drawable} of the 24 values are drawable (positive)`);
  check(await page.$('#chart canvas'), 'no canvas in #chart');

  // The CSV link of run 1 gives results.csv.
  const csv = await page.evaluate(async (n) => {
    const a = document.querySelector(`#runs [data-run="${n}"] a.csv`);
    if (!a || a.hidden) return null;
    const response = await fetch(a.href);
    return { status: response.status, text: await response.text() };
  }, n1);
  check(csv, 'run 1 has no visible a.csv link');
  check(csv.status === 200 && csv.text.startsWith('length,mse,'),
    `run 1's CSV link: HTTP ${csv.status}, starting "${csv.text.slice(0, 60)}"`);

  // "Download figure" saves a PNG.
  await page.click(`#runs [data-run="${n1}"] button.figure`);
  const png = await waitForFile(downloads, /\.png$/, 10_000);
  const bytes = fs.readFileSync(png);
  check(bytes.subarray(0, 8).toString('hex') === '89504e470d0a1a0a', `${path.basename(png)} is not a PNG`);
  const [width, height] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];   // from the IHDR chunk
  check(width >= 600 && height >= 400, `the figure is ${width}x${height} px: the chart is missing from it`);

  lastRun = n2;
  const growth = seenPoints.join('→');
  const queueNote = queueText ? `run 2 showed "${queueText}"` : `run 2 answered queue_position ${second.body.queue_position ?? '(none: run 1 had finished)'}`;
  return `two runs: ${queueNote}; points drawn ${growth}${pointsBeforeDone ? ` (${pointsBeforeDone} before both completed)` : ''}; CSV and PNG download`;
}

async function testReport(browser, reportPath) {
  check(fs.existsSync(reportPath), `no report at ${reportPath}`);
  const page = await browser.newPage();
  const errors = watchErrors(page);
  await page.goto(pathToFileURL(path.resolve(reportPath)).href, { waitUntil: 'load' });
  const facts = await page.evaluate(() => ({
    h1: document.querySelectorAll('h1').length,
    tables: document.querySelectorAll('table').length,
    svgs: [...document.querySelectorAll('svg')].map((s) => Math.round(s.getBoundingClientRect().width)),
  }));
  await page.close();
  check(errors.length === 0, errors.join('\n'));
  check(facts.h1 >= 1, 'report has no <h1>');
  check(facts.tables >= 1, 'report has no <table>');
  check(facts.svgs.some((w) => w > 100), `report has no <svg> wider than 100 px (widths: ${facts.svgs.join(', ') || 'none'})`);
  return `report.html: ${facts.tables} tables, ${facts.svgs.filter((w) => w > 100).length} figures as <svg>, no console error`;
}

// --- main -------------------------------------------------------------------------------------------

let browser = null;
let failed = 0;
let number = 0;
let lastRun = null;   // the last run testTwoRuns started

// The default server (127.0.0.1, no flag) checks every request's Host and Origin: the page works
// from http://localhost:PORT/ as from http://127.0.0.1:PORT/ (its fetches carry the browser's own
// Origin), and a POST that is not JSON, as another site's form could send, is refused (415).
async function testLocalhost(browser, base) {
  const local = base.replace('127.0.0.1', 'localhost');
  const page = await browser.newPage();
  try {
    await page.goto(local, { waitUntil: 'load' });
    await page.waitForFunction(() => document.querySelector('#task').options.length > 0, { timeout: 10_000 });
    const answers = await page.evaluate(async () => {
      const post = async (type) => {
        const r = await fetch('/api/runs', { method: 'POST', headers: { 'Content-Type': type }, body: '{"reparam": "sqrt(x"}' });
        return { status: r.status, text: await r.text() };
      };
      return { json: await post('application/json'), plain: await post('text/plain') };
    });
    check(answers.json.status === 400 && answers.json.text.includes('sqrt(x'),
      `from ${local} a JSON POST with a bad reparam answered HTTP ${answers.json.status}, not its 400: ${answers.json.text}`);
    check(answers.plain.status === 415,
      `from ${local} a text/plain POST answered HTTP ${answers.plain.status}, not 415: ${answers.plain.text}`);
  } finally {
    await page.close();
  }
  return `the page at ${local} loads its options and posts JSON; a text/plain POST is refused (415)`;
}

// A completed text run shows a sample beside its curve (GET /api/runs/N/sample): the text it writes
// after its corpus's first test characters, as the API gives it, as text.
async function testTextSample(page, base, errors) {
  const errorsBefore = errors.length;
  await fill(page, { '#reparam': 'identity' });
  await fill(page, { '#task': 'text' });
  await fill(page, { '#corpus': 'phrase', '#l_train': '8', '#l_test': '16', '#steps': '20' });
  const { status, body } = await submit(page);
  check(status === 200, `the text run: HTTP ${status}: ${JSON.stringify(body)}`);
  const n = body.number;
  const box = await page.waitForSelector(`#runs > [data-run="${n}"] .sample:not([hidden])`,
    { timeout: RUNS_TIMEOUT_MS });
  const shown = await box.evaluate((e) => ({
    caption: e.querySelector('.sample-caption').textContent,
    prompt: e.querySelector('.sample-prompt').textContent,
    text: e.querySelector('.sample-text').textContent,
  }));
  const api = await getJson(base, `/api/runs/${n}/sample`);
  check(shown.prompt === api.prompt && shown.text === api.text,
    `the page shows ${JSON.stringify(shown)}, the API ${JSON.stringify(api)}`);
  check(shown.text.length === 200, `the sample has ${shown.text.length} characters, not 200`);
  check(errors.length === errorsBefore, errors.slice(errorsBefore).join('\n'));
  return `a text run's sample beside its curve: "${shown.prompt.slice(0, 20)}…" then ${shown.text.length} characters written`;
}

async function runTest(name, errors, body) {
  number += 1;
  const before = errors ? errors.length : 0;
  try {
    const detail = await body();
    const fresh = errors ? errors.slice(before) : [];
    check(fresh.length === 0, fresh.join('\n'));
    console.log(`ok ${number} - ${detail}`);
  } catch (err) {
    failed += 1;
    // A server that died explains most failures: say so on the same line.
    const died = served && served.exit() ? ` [lenlab serve exited (${served.exit()}) during the test; stderr: ${JSON.stringify(served.stderr().slice(-500))}]` : '';
    console.log(`not ok ${number} - ${name}: ${err.message}${died}`);
  }
}

try {
  // A small corpus the page offers by name, for the text run's sample.
  const corpus = path.join(corpusDir, 'phrase.txt');
  fs.writeFileSync(corpus, 'in the beginning was the word. '.repeat(100));
  served = await startServe(args.lenlab, ['--out', outDir, '--max-running', '1', '--corpus', `phrase=${corpus}`]);
  const base = served.base;
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors = watchErrors(page);
  const downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'lenlab-downloads-'));
  const cdp = await page.createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });

  await page.goto(base, { waitUntil: 'load' });
  await page.waitForFunction(() => document.querySelector('#task').options.length > 0, { timeout: 10_000 });

  await runTest('the form\'s layout', errors, () => testLayout(page));
  await runTest('bad reparam expression', errors, () => testBadExpression(page));
  await runTest('two runs', errors, () => testTwoRuns(page, base, downloads, errors));
  await runTest('on a projector', errors, () => testProjector(page, lastRun));
  await runTest('a text run\'s sample', errors, () => testTextSample(page, base, errors));
  await runTest('16 runs', null, () => testSixteenRuns(browser, base, watchErrors));
  await runTest('the page from localhost', null, () => testLocalhost(browser, base));
  // The page's runs are saved like any other: `lenlab plot` draws them, and its report.html
  // (self-contained, figures inline) must read in the browser.
  await runTest('lenlab plot of the page\'s runs', null, () => {
    const plot = spawnSync(path.resolve(args.lenlab), ['plot', outDir], { encoding: 'utf8' });
    check(plot.status === 0, `lenlab plot ${outDir} exited ${plot.status}: ${(plot.stderr || '').slice(-500)}`);
    return testReport(browser, path.join(outDir, 'report.html'));
  });
  if (args.report) await runTest('report.html', null, () => testReport(browser, args.report));
  await runTest('a classroom: students and the teacher', null, () => testClassroomRoles(browser, args.lenlab, watchErrors));
  fs.rmSync(downloads, { recursive: true, force: true });
} catch (err) {
  failed += 1;
  console.log(`not ok - setting up: ${err.message}`);
} finally {
  if (browser) await browser.close().catch(() => {});
  if (served) await served.stop();
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.rmSync(corpusDir, { recursive: true, force: true });
}

// A sanitizer build reports its findings on stderr; they fail the test even if the page worked.
if (served && /AddressSanitizer|LeakSanitizer|runtime error:/.test(served.stderr())) {
  failed += 1;
  console.log(`not ok - lenlab serve's sanitizer report:\n${served.stderr().slice(-3000)}`);
}
process.exit(failed ? 1 : 0);
