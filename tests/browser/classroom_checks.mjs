// The live page on a projector (live_page.test.mjs runs these): at 800x600 the chart is on screen
// and large, its text legible, its legend no taller than it; 16 runs get 16 line colours; the
// form's status line follows the run it started to the end.
import { check } from './page_helpers.mjs';

const MIN_TEXT_PX = 14;   // legible from the back of a room

// Where the chart and its legend are, and the type sizes, at the current viewport.
function measure(page) {
  return page.evaluate(() => {
    const canvas = document.querySelector('#chart .uplot canvas');
    const legend = document.querySelector('#chart .u-legend');
    const rect = (e) => (e ? e.getBoundingClientRect() : null);
    const px = (font) => Number((String(font).match(/(\d+(?:\.\d+)?)px/) || [0, 0])[1]);
    return {
      scrollY: window.scrollY,
      chart: rect(canvas) && { top: rect(canvas).top, height: rect(canvas).height },
      legend: rect(legend) && { height: rect(legend).height },
      legendText: legend ? legend.innerText : '',   // what is displayed
      xEntryShown: !!legend && getComputedStyle(legend.querySelector('.u-series')).display !== 'none',
      bodyPx: parseFloat(getComputedStyle(document.body).fontSize),
      // uPlot keeps each axis's font as [css font, size in px]; the text in the CSS font.
      axisPx: state.plot ? state.plot.axes.map((a) => Math.min(px(a.font), px(a.labelFont))) : [],
    };
  });
}

function checkReadable(m, what) {
  check(m.chart, `${what}: no chart canvas`);
  check(m.scrollY === 0, `${what}: the page is scrolled (${m.scrollY} px)`);
  check(m.chart.top >= 0 && m.chart.top <= 600, `${what}: the chart's top is at ${Math.round(m.chart.top)} px, below the 600 px screen`);
  check(m.chart.height > 200, `${what}: the chart is ${Math.round(m.chart.height)} px tall, not over 200`);
  check(m.legend && m.legend.height <= m.chart.height,
    `${what}: the legend is ${m.legend && Math.round(m.legend.height)} px tall, taller than the chart's ${Math.round(m.chart.height)}`);
  check(!/--/.test(m.legendText) && !m.xEntryShown,
    `${what}: the legend shows placeholders while the cursor is off the chart: "${m.legendText}"`);
  check(m.bodyPx >= MIN_TEXT_PX, `${what}: the base font is ${m.bodyPx} px, under ${MIN_TEXT_PX}`);
  check(m.axisPx.length === 2 && m.axisPx.every((p) => p >= MIN_TEXT_PX), `${what}: the axes' fonts are ${m.axisPx.join(', ')} px, under ${MIN_TEXT_PX}`);
}

// After testTwoRuns: the form's status line reports the last started run as finished, and at
// 800x600 the page shows the chart first, readable, without scrolling.
export async function testProjector(page, lastRun) {
  await page.waitForFunction((n) => new RegExp(`Run ${n} completed`).test(document.querySelector('#form-status').textContent),
    { timeout: 5000 }, lastRun)
    .catch(async () => { throw new Error(`#form-status reads "${await page.$eval('#form-status', (e) => e.textContent)}" after run ${lastRun} completed`); });
  const status = await page.$eval('#form-status', (e) => e.textContent.trim());
  await page.setViewport({ width: 800, height: 600 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await new Promise((resolve) => setTimeout(resolve, 400));   // the page resizes the chart 100 ms after
  const m = await measure(page);
  checkReadable(m, '800x600, two runs');
  await page.setViewport({ width: 1280, height: 900 });
  return `the form says "${status}"; at 800x600 the chart's top is at ${Math.round(m.chart.top)} px, ${Math.round(m.chart.height)} px tall, legend ${Math.round(m.legend.height)} px, fonts ${m.bodyPx}/${m.axisPx.join('/')} px`;
}

// 16 runs on one chart, in a page of its own whose polling is stopped and whose run list is given
// 16 made-up completed runs (training 16 would take minutes): 16 distinct line colours, in uPlot's
// series and in the legend's swatches, and at 800x600 a legend no taller than the chart.
export async function testSixteenRuns(browser, base, watchErrors) {
  const page = await browser.newPage();
  const errors = watchErrors(page);
  try {
    await page.setViewport({ width: 800, height: 600 });
    await page.goto(base, { waitUntil: 'load' });
    await page.waitForFunction(() => document.querySelector('#task').options.length > 0, { timeout: 10_000 });
    await page.evaluate(() => {
      schedulePoll = () => {};   // eslint-disable-line no-global-assign -- this page lists only the runs below
      clearTimeout(state.pollTimer);
    });
    await page.waitForFunction(() => !state.polling, { timeout: 5000 });
    await page.evaluate(() => {
      const runs = Array.from({ length: 16 }, (_, i) => ({
        number: i + 1, id: `run-${i + 1}`, label: `length nope reparam ${i + 1}`, state: 'completed',
        metric: 'mse', metric_label: 'mean squared error', l_train: 5, l_test: 12, progress: 1,
        results: Array.from({ length: 12 }, (__, l) => ({ length: l + 1, value: 0.01 * (i + 1) * (l + 1) })),
      }));
      state.selected = 16;
      updateRuns(runs);
    });
    const colours = await page.evaluate(() => ({
      strokes: state.plot.series.slice(1).map((s, i) => s.stroke(state.plot, i + 1)),
      swatches: [...document.querySelectorAll('#chart .u-legend .u-series:not(:first-child) .u-marker')]
        .map((e) => getComputedStyle(e).borderTopColor),
    }));
    check(colours.strokes.length === 16, `${colours.strokes.length} series drawn, not 16`);
    check(new Set(colours.strokes).size === 16, `16 runs' series have ${new Set(colours.strokes).size} distinct colours: ${colours.strokes.join(' ')}`);
    check(colours.swatches.length === 16 && new Set(colours.swatches).size === 16,
      `the legend has ${colours.swatches.length} swatches in ${new Set(colours.swatches).size} colours: ${colours.swatches.join(' ')}`);
    const m = await measure(page);
    checkReadable(m, '800x600, 16 runs');
    check(errors.length === 0, errors.join('\n'));
    return `16 runs: 16 distinct line colours in the series and the legend; at 800x600 the chart's top is at ${Math.round(m.chart.top)} px, ${Math.round(m.chart.height)} px tall, its legend ${Math.round(m.legend.height)} px`;
  } finally {
    await page.close();
  }
}
