// The live page as a classroom (live_page.test.mjs runs this): a server started with --classroom
// on loopback, a student's, a second student's and the teacher's browser, each its own browser
// context (its own cookies). Students join with the code and a name and see their own runs only;
// the teacher sees everyone's, cancels a student's run and closes the queue, which the students'
// pages then say.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { check, fill, sleep, startServe, submit } from './page_helpers.mjs';

const JOIN = 'ABCD23';
const TEACHER = 'TEACHER7CODE';

// A fresh browser context (no cookies) on the page: the join form is what it shows first.
async function openPage(browser, base, watchErrors) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors = watchErrors(page);
  await page.goto(base, { waitUntil: 'load' });
  await page.waitForSelector('#join:not([hidden])', { timeout: 10_000 });
  check(await page.$eval('main', (e) => e.hidden), 'the page shows the form before the join');
  return { context, page, errors };
}

async function join(page, code, name) {
  await fill(page, { '#join-code': code, '#join-name': name });
  const [response] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/api/join', { timeout: 10_000 }),
    page.click('#join-button'),
  ]);
  return response.status();
}

// The runs a page lists: number, title, state, whether its Cancel button shows.
function listedRuns(page) {
  return page.$$eval('#runs [data-run]', (items) => items.map((item) => ({
    number: Number(item.dataset.run),
    title: item.querySelector('.title').textContent,
    state: item.querySelector('.state').textContent.trim(),
    cancel: !item.querySelector('.cancel').hidden,
  })));
}

async function waitFor(page, what, predicate, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = await listedRuns(page);
    if (predicate(runs)) return runs;
    check(Date.now() < deadline, `${what} within ${timeoutMs / 1000} s; the page lists ${JSON.stringify(runs)}`);
    await sleep(100);
  }
}

export async function testClassroomRoles(browser, lenlab, watchErrors) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'lenlab-classroom-'));
  const served = await startServe(lenlab, ['--out', out, '--max-running', '1', '--classroom',
    '--join-code', JOIN, '--teacher-code', TEACHER, '--runs-per-student', '2']);
  const pages = [];
  try {
    check(served.stdout().includes(`join code ${JOIN}`), `the start-up lines do not show the join code: ${served.stdout()}`);
    const ada = await openPage(browser, served.base, watchErrors);
    const bob = await openPage(browser, served.base, watchErrors);
    const teacher = await openPage(browser, served.base, watchErrors);
    pages.push(ada, bob, teacher);

    // A wrong code is refused beside its field; the right one lets Ada in.
    check(await join(ada.page, 'WRONG9', 'Ada') === 403, 'a wrong code was not refused with 403');
    // The page writes the error after reading the 403's body: wait for it, not for the status.
    await ada.page.waitForFunction(() => {
      const e = document.querySelector('#error-join-code');
      return e && !e.hidden && e.textContent !== '';
    }, { timeout: 5000 }).catch(() => {});
    const codeError = await ada.page.$eval('#error-join-code', (e) => (e.hidden ? '' : e.textContent));
    check(/not this class's code/.test(codeError), `the wrong code's error reads "${codeError}"`);
    ada.errors.length = 0;   // the 403 is the answer asked for: Chrome logs it as a failed load
    check(await join(ada.page, JOIN.toLowerCase(), 'Ada') === 200, 'Ada could not join');
    check(await join(bob.page, JOIN, 'Bob') === 200, 'Bob could not join');
    check(await join(teacher.page, TEACHER, '') === 200, 'the teacher could not join');
    for (const p of pages) await p.page.waitForFunction(() => document.querySelector('#task').options.length > 0, { timeout: 10_000 });
    const who = await ada.page.$eval('#whoami', (e) => e.textContent);
    check(who.startsWith('Ada'), `Ada's page says "${who}"`);
    check(await teacher.page.$eval('#teacher-tools', (e) => !e.hidden), 'the teacher\'s page has no teacher tools');
    check(await ada.page.$eval('#teacher-tools', (e) => e.hidden), 'a student\'s page shows the teacher tools');

    // Ada starts a long run: hers, with her name; Bob does not see it, the teacher does.
    await fill(ada.page, { '#task': 'length', '#l_train': '5', '#l_test': '8', '#steps': '200000' });
    const started = await submit(ada.page);
    check(started.status === 200, `Ada's run: HTTP ${started.status} ${JSON.stringify(started.body)}`);
    const n = started.body.number;
    const adaRuns = await waitFor(ada.page, 'Ada\'s run listed', (rs) => rs.some((r) => r.number === n));
    check(adaRuns.find((r) => r.number === n).title.startsWith(`#${n} Ada · `), `Ada's run is titled "${adaRuns[0].title}"`);
    check(adaRuns.find((r) => r.number === n).cancel, 'Ada cannot cancel her own run');
    const teacherRuns = await waitFor(teacher.page, 'Ada\'s run on the teacher\'s page', (rs) => rs.some((r) => r.number === n && r.cancel));
    await sleep(1200);   // two of Bob's polls
    const bobRuns = await listedRuns(bob.page);
    check(bobRuns.length === 0, `Bob's page lists ${JSON.stringify(bobRuns)}`);
    // The chart's legend names each run's owner too.
    await teacher.page.waitForFunction((k) => {
      const legend = document.querySelector('#chart .u-legend');
      return legend && legend.textContent.includes(`#${k} Ada · `);
    }, { timeout: 10_000 }, n).catch(async () => {
      throw new Error(`the teacher's legend reads "${await teacher.page.$eval('#chart', (e) => e.textContent.slice(0, 200))}"`);
    });

    // The teacher cancels it; Ada's page follows.
    await teacher.page.click(`#runs [data-run="${n}"] .cancel`);
    await waitFor(teacher.page, 'the run cancelled on the teacher\'s page', (rs) => rs.some((r) => r.number === n && r.state === 'cancelled'));
    await waitFor(ada.page, 'the run cancelled on Ada\'s page', (rs) => rs.some((r) => r.number === n && r.state === 'cancelled' && !r.cancel));
    const message = await ada.page.$eval(`#runs [data-run="${n}"] .message`, (e) => e.textContent);
    check(message === 'cancelled by teacher', `Ada's run's message reads "${message}"`);

    // The teacher closes the queue: Bob's submission is refused with why, his page says so.
    await teacher.page.click('#queue-toggle');
    await teacher.page.waitForFunction(() => document.querySelector('#queue-toggle').textContent === 'Open the queue', { timeout: 5000 });
    await fill(bob.page, { '#steps': '20' });
    const refused = await submit(bob.page);
    check(refused.status === 503, `Bob's run with the queue closed: HTTP ${refused.status}`);
    await bob.page.waitForFunction(() => document.querySelector('#form-error').textContent !== '',
      { timeout: 5000 }).catch(() => {});
    const formError = await bob.page.$eval('#form-error', (e) => e.textContent);
    check(/closed the queue/.test(formError), `Bob's page says "${formError}"`);
    bob.errors.length = 0;   // the 503 asked for
    await bob.page.waitForFunction(() => /closed/.test(document.querySelector('#queue-state').textContent), { timeout: 10_000 });

    for (const { errors } of pages) check(errors.length === 0, errors.join('\n'));
    return `three browsers: a wrong code refused beside its field; Ada's run titled "${teacherRuns.find((r) => r.number === n).title.slice(0, 40)}…" listed for her and the teacher, not for Bob; the teacher cancelled it (Ada's page: "${message}"), closed the queue (Bob: 503, "${formError.slice(0, 50)}…")`;
  } finally {
    for (const { context } of pages) await context.close().catch(() => {});
    await served.stop();
    fs.rmSync(out, { recursive: true, force: true });
  }
}
