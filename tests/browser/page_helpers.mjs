// What the live page's browser test (live_page.test.mjs) does with a page: checks, its form's
// clicks and fields, the server's JSON, what the page shows, a downloaded file.
import fs from 'node:fs';
import path from 'node:path';

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
