#!/usr/bin/env node
// Remakes docs/course/img/live_page.png, the live page after two runs (length prediction with
// identity and with sqrt, trained on 1..10), as docs/course/README.md shows it:
//
//   node tests/browser/screenshot_live_page.mjs --lenlab build/release/lenlab [--out PNG]
//
// Not a test: run it when the page's look changes. Takes about a minute (two runs of the page's
// default size, one after the other).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { fill, startServe, submit } from './page_helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = { out: path.join(HERE, '..', '..', 'docs', 'course', 'img', 'live_page.png') };
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.lenlab) {
  console.error('usage: node screenshot_live_page.mjs --lenlab PATH [--out PNG]');
  process.exit(2);
}
const { default: puppeteer } = await import('puppeteer-core');

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lenlab-screenshot-'));
const served = await startServe(args.lenlab, ['--out', outDir, '--max-running', '1']);
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 860 });
  await page.goto(served.base, { waitUntil: 'load' });
  await page.waitForFunction(() => document.querySelector('#task').options.length > 0);
  await fill(page, { '#task': 'length', '#l_train': '10', '#reparam': 'identity' });
  const first = await submit(page);
  await fill(page, { '#reparam': 'sqrt' });
  const second = await submit(page);
  const numbers = [first.body.number, second.body.number];
  await page.waitForFunction((ns) => ns.every((n) => {
    const item = document.querySelector(`#runs [data-run="${n}"] .state`);
    return item && item.textContent.trim() === 'completed';
  }), { timeout: 300_000 }, numbers);
  await new Promise((resolve) => setTimeout(resolve, 600));   // the last poll's redraw
  await page.screenshot({ path: args.out });
  console.log(`wrote ${args.out}`);
} finally {
  await browser.close();
  await served.stop();
  fs.rmSync(outDir, { recursive: true, force: true });
}
