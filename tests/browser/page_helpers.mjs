// What the live page's browser test (live_page.test.mjs) does with a page: checks, its form's
// clicks and fields, the server's JSON, what the page shows, a downloaded file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const LISTEN_TIMEOUT_MS = 30_000;   // the server's "listening" line
const started = [];                 // every server started: none outlives this process
process.on('exit', () => {
  for (const s of started) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
});

// Starts `lenlab serve --port 0 ARGS...` and waits for its "listening on" line. Returns
// { base: 'http://127.0.0.1:PORT/', stdout: the lines printed by then, stderr(), exit(): how it
// ended ("signal SIGSEGV", "status 1") or null, stop() }.
export function startServe(lenlab, args) {
  const proc = spawn(path.resolve(lenlab), ['serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(proc);
  let stderr = '';
  let exit = null;
  proc.on('exit', (code, signal) => { exit = signal ? `signal ${signal}` : `status ${code}`; });
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (s) => { stderr += s; });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(
      `no "lenlab serve: listening on ..." line within ${LISTEN_TIMEOUT_MS / 1000} s; stdout: ${stdout.slice(-500)}; stderr: ${stderr.slice(-1000)}`)),
    LISTEN_TIMEOUT_MS);
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (s) => {
      stdout += s;
      const m = stdout.match(/lenlab serve: listening on (http:\/\/127\.0\.0\.1:(\d+)\/)[^\n]*\n/);
      if (m && (!args.includes('--classroom') || /teacher code/.test(stdout))) {
        clearTimeout(timer);
        resolve({ base: m[1], stdout: () => stdout, stderr: () => stderr, exit: () => exit, stop });
      }
    });
    proc.on('error', (err) => { clearTimeout(timer); reject(err); });
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`lenlab serve exited (${signal || 'status ' + code}) before listening; stderr: ${stderr.slice(-1000)}`));
    });
  });
}

export function check(condition, message) {
  if (!condition) throw new Error(message);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Clicks #start and returns the answer to the POST it sends: {status, body}.
export async function submit(page) {
  // The page disables #start while its previous POST is answered; a click then would be lost.
  await page.waitForSelector('#start:not([disabled])', { timeout: 10_000 });
  const [response] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/api/runs' && r.request().method() === 'POST',
      { timeout: 10_000 }),
    page.click('#start'),
  ]);
  return { status: response.status(), body: await response.json() };
}

export async function fill(page, values) {
  for (const [selector, value] of Object.entries(values)) await page.locator(selector).fill(value);
}

export async function getJson(base, urlPath) {
  const response = await fetch(new URL(urlPath, base)).catch((err) => {
    throw new Error(`GET ${urlPath}: ${err.message}${err.cause ? ` (${err.cause.code || err.cause.message})` : ''}`);
  });
  check(response.ok, `GET ${urlPath}: HTTP ${response.status}`);
  return response.json();
}

// What the page shows at this moment: each run's state and queue text, and the plotted points.
export function snapshot(page) {
  return page.evaluate(() => ({
    points: Number(document.body.dataset.points),
    connection: document.querySelector('#connection').hidden ? '' : document.querySelector('#connection').textContent,
    runs: [...document.querySelectorAll('#runs [data-run]')].map((item) => ({
      number: Number(item.dataset.run),
      state: item.querySelector('.state').textContent.trim(),
      queue: item.querySelector('.queue-position') ? item.querySelector('.queue-position').textContent.trim() : '',
      message: (item.querySelector('.message') || { textContent: '' }).textContent.trim(),
    })),
  }));
}

export async function waitForFile(dir, pattern, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const name = fs.readdirSync(dir).find((f) => pattern.test(f));
    if (name) return path.join(dir, name);   // Chrome writes to a .crdownload name, then renames
    check(Date.now() < deadline, `no file matching ${pattern} downloaded within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}
