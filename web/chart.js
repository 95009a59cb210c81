// lenlab live page: the chart of test error against length (uPlot), its l_train band and line,
// and the figure download. Loaded before app.js, whose `state`, `$`, `el` and `safeName` these
// functions read when they are called (and classroom.js's runTitle).
'use strict';

// 16 line colours, by run number so that a run keeps its colour when others are hidden: the
// Okabe-Ito set (its yellow, too pale on a projector, swapped for a wine red), then Paul Tol's
// darker colour-blind-safe ones. Both sets are chosen to stay apart with the common colour-vision
// deficiencies; each later round of 16 adds a dash pattern, so run 17 is not run 1 again.
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#882255',
  '#332288', '#117733', '#AA4499', '#44AA99', '#999933', '#CC6677', '#661100', '#6699CC'];
const DASHES = [[], [10, 5], [2, 4], [12, 4, 2, 4]];   // solid for runs 1..16, then dashed, dotted, ...
// At least 16 px on the canvas: read from the back of a room.
const AXIS_FONT = '16px system-ui, sans-serif';
const LABEL_FONT = 'bold 18px system-ui, sans-serif';
const AXIS_INK = '#111';                  // axes and ticks: full contrast survives a washed-out projector
const GRID_INK = 'rgba(0, 0, 0, 0.14)';   // uPlot's 0.07 grey vanishes on one

// The chart's height: 420 px on a screen, less on a short one (a projector's 800x600), so that the
// chart and its legend fit under the heading without scrolling; never under 240 px.
function chartHeight() {
  return Math.round(Math.max(240, Math.min(420, window.innerHeight - 300)));
}

// ---------------------------------------------------------------------------------------------
// The chart

// What to draw: the selected run's metric, and every shown run with that metric.
function chartModel() {
  const chosen = state.runs.get(state.selected);
  if (!chosen || !chosen.metric) return null;
  const runs = [...state.runs.values()]
    .filter((r) => state.shown.has(r.number) && r.metric === chosen.metric)
    .sort((a, b) => a.number - b.number);
  const log = chosen.metric === 'mse';
  // x: every length any drawn run has a result at; one y array per run, null where it has none.
  // A length whose value is null stays on the x axis, so that the curve shows a gap there.
  const perRun = runs.map((r) => valuesByLength(r.results || [], log));
  const lengths = [...new Set(runs.flatMap((r) => (r.results || []).map((p) => p.length)))]
    .filter(Number.isFinite).sort((a, b) => a - b);
  const ys = perRun.map((m) => lengths.map((l) => (m.has(l) ? m.get(l) : null)));
  const xMax = Math.max(1, ...runs.map((r) => r.l_test || 0), ...lengths);
  const xMin = Math.min(1, ...lengths);
  const points = ys.reduce((n, y) => n + y.filter((v) => v !== null).length, 0);
  return { chosen, runs, log, data: [lengths, ...ys], xMin, xMax, points };
}

// length -> value. A value that cannot be drawn (null, NaN, and <= 0 on the log axis) is left
// out; several rows at one length (passkey's depths) are averaged.
function valuesByLength(results, log) {
  const sums = new Map();
  for (const { length, value } of results) {
    if (value === null || value === undefined || !Number.isFinite(value) || (log && value <= 0)) continue;
    const [s, n] = sums.get(length) || [0, 0];
    sums.set(length, [s + value, n + 1]);
  }
  return new Map([...sums].map(([l, [s, n]]) => [l, s / n]));
}

function redraw() {
  const chart = $('#chart');
  const model = chartModel();
  $('#chart-title').textContent = model
    ? `${model.chosen.metric_label || model.chosen.metric} against test length`
    : 'Test error against length';
  if (!model || model.runs.length === 0) {
    destroyPlot();
    chart.replaceChildren(el('p', { class: 'chart-empty' }, model
      ? 'No run with this metric is shown: tick "show" beside one.'
      : 'Start a run: its test error appears here, length by length, as it is evaluated.'));
    document.body.dataset.points = '0';
    return;
  }
  // Rebuilt only when the series, the axes or the band change; new points alone use setData.
  const key = JSON.stringify([model.chosen.metric, model.chosen.metric_label, model.chosen.l_train,
    model.runs.map((r) => [r.number, r.label]), model.xMin, model.xMax]);
  if (state.plot && key === state.plotKey) {
    state.plot.setData(model.data);
  } else {
    destroyPlot();
    chart.replaceChildren();
    state.plot = new uPlot(plotOptions(model, chart.clientWidth), model.data, chart);
    state.plotKey = key;
  }
  document.body.dataset.points = String(model.points);
}

function destroyPlot() {
  if (state.plot) state.plot.destroy();
  state.plot = null;
  state.plotKey = '';
}

function plotOptions(model, width) {
  const { chosen, log, xMin, xMax } = model;
  const metric = chosen.metric;
  let y = {};
  if (log) y = { distr: 3, log: 10 };
  else if (/accuracy|exact_match/.test(metric)) y = { range: [0, 1.04] };   // a fraction: 0..1, a perfect run visible
  const lTrain = chosen.l_train;
  return {
    width: Math.max(320, width),
    height: chartHeight(),
    // A fixed x axis 1..l_test: the curve grows to the right instead of the axis rescaling.
    scales: { x: { time: false, range: () => [xMin, xMax] }, y },
    axes: [
      { label: 'test length', ...axisStyle(), size: 50, labelSize: 30 },
      {
        label: chosen.metric_label || metric, ...axisStyle(), size: 80, labelSize: 30,
        // uPlot's default prints 1e-5 as "0"; uPlot passes null for the ticks it leaves unlabelled.
        ...(log ? { values: (u, ticks) => ticks.map((v) => (v == null ? null : formatTick(v))) } : {}),
      },
    ],
    series: [
      { label: 'length' },   // its legend entry is hidden by style.css: the x axis says the length
      ...model.runs.map((r) => ({
        label: runTitle(r),
        stroke: colourOf(r.number),
        dash: dashOf(r.number),
        width: r.number === chosen.number ? 3 : 2,
        points: { show: true, size: 7, fill: colourOf(r.number) },
        spanGaps: false,
        // The legend's reading: the value under the cursor, nothing while the cursor is off the chart.
        value: (u, v) => (v == null ? '' : String(Number(v.toPrecision(3)))),
      })),
    ],
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },   // no zoom by drag: a stray drag on a projector confuses
    hooks: { drawClear: [(u) => drawTrainBand(u, lTrain)], draw: [(u) => drawTrainLine(u, lTrain)] },
  };
}

// The training lengths 1..l_train, shaded under the grid and the curves.
function drawTrainBand(u, lTrain) {
  if (!(lTrain > 0)) return;
  const { left, top, width, height } = u.bbox;
  const x1 = Math.min(left + width, u.valToPos(lTrain, 'x', true));
  if (x1 <= left) return;
  u.ctx.save();
  u.ctx.fillStyle = 'rgba(0, 0, 0, 0.07)';
  u.ctx.fillRect(left, top, x1 - left, height);
  u.ctx.restore();
}

// A dashed line at l_train with its name, so a printed or projected figure says where training ended.
function drawTrainLine(u, lTrain) {
  if (!(lTrain > 0)) return;
  const { left, top, width, height } = u.bbox;
  const x = u.valToPos(lTrain, 'x', true);
  if (x < left || x > left + width) return;
  const ctx = u.ctx;
  const px = window.devicePixelRatio || 1;
  ctx.save();
  ctx.strokeStyle = '#555';
  ctx.lineWidth = 1.5 * px;
  ctx.setLineDash([6 * px, 4 * px]);
  ctx.beginPath();
  ctx.moveTo(x, top);
  ctx.lineTo(x, top + height);
  ctx.stroke();
  // On a light box, so that it stays readable where a curve crosses it.
  const text = `l_train = ${lTrain}`;
  ctx.font = `${16 * px}px system-ui, sans-serif`;
  ctx.setLineDash([]);
  ctx.textAlign = 'left';           // uPlot leaves its last axis's alignment on the context
  ctx.textBaseline = 'alphabetic';
  ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
  ctx.fillRect(x + 4 * px, top + 4 * px, ctx.measureText(text).width + 8 * px, 22 * px);
  ctx.fillStyle = '#222';
  ctx.fillText(text, x + 8 * px, top + 20 * px);
  ctx.restore();
}

// The figure as a PNG: uPlot's canvas (axes, band, curves) on white, with the title above and a
// legend below drawn in, since uPlot's own title and legend are HTML and not on the canvas.
async function downloadFigure(number) {
  selectRun(number);          // the figure of this run's metric, with its l_train band
  // uPlot sizes and draws a new chart in a later task: wait for the frame that shows it.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const u = state.plot;
  if (!u) return;
  const model = chartModel();
  const src = u.ctx.canvas;
  const px = window.devicePixelRatio || 1;
  const pad = 16 * px, titleH = 40 * px, rowH = 26 * px;
  const canvas = document.createElement('canvas');
  const ctx = canvas.getContext('2d');
  ctx.font = `${16 * px}px system-ui, sans-serif`;
  const legendW = Math.max(0, ...model.runs.map((r) => ctx.measureText(runTitle(r)).width));
  canvas.width = Math.max(src.width, 38 * px + legendW) + 2 * pad;   // resizing resets the context
  canvas.height = titleH + src.height + pad + rowH * model.runs.length + pad;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.textAlign = 'left';
  ctx.fillStyle = '#111';
  ctx.font = `bold ${20 * px}px system-ui, sans-serif`;
  ctx.fillText($('#chart-title').textContent, pad, 28 * px);
  ctx.drawImage(src, pad, titleH);
  ctx.font = `${16 * px}px system-ui, sans-serif`;
  model.runs.forEach((r, i) => {
    const yMid = titleH + src.height + pad + rowH * i + rowH / 2;
    ctx.strokeStyle = colourOf(r.number);   // the line's colour and dash pattern
    ctx.lineWidth = 4 * px;
    ctx.setLineDash(dashOf(r.number).map((d) => d * px));
    ctx.beginPath();
    ctx.moveTo(pad, yMid);
    ctx.lineTo(pad + 28 * px, yMid);
    ctx.stroke();
    ctx.fillStyle = '#111';
    ctx.fillText(runTitle(r), pad + 38 * px, yMid + 6 * px);
  });
  const a = el('a', { href: canvas.toDataURL('image/png'), download: `${safeName(state.runs.get(number).id || 'run-' + number)}-${model.chosen.metric}.png` });
  document.body.append(a);
  a.click();
  a.remove();
}

// A tick of the log axis: plain between 0.001 and 10^5, else 1e-5 (shorter than 0.00001).
function formatTick(v) {
  const a = Math.abs(v);
  if (a === 0 || (a >= 1e-3 && a < 1e5)) return String(Number(v.toPrecision(6)));
  return v.toExponential(0).replace('e+', 'e');
}

function colourOf(number) { return PALETTE[(number - 1) % PALETTE.length]; }
function dashOf(number) { return DASHES[Math.floor((number - 1) / PALETTE.length) % DASHES.length]; }

// The run list's swatch: the line's colour, broken like its dash pattern.
function swatchBackground(number) {
  const c = colourOf(number), d = dashOf(number);
  if (!d.length) return c;
  return `repeating-linear-gradient(90deg, ${c} 0 ${d[0]}px, transparent ${d[0]}px ${d[0] + d[1]}px)`;
}

function axisStyle() {
  return { font: AXIS_FONT, labelFont: LABEL_FONT, stroke: AXIS_INK, grid: { stroke: GRID_INK, width: 1 },
    ticks: { stroke: GRID_INK, width: 1 } };
}

// The chart follows the window's size (a projector's, a resized browser's), 100 ms after the last
// change.
let resizeTimer = null;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (state.plot) state.plot.setSize({ width: Math.max(320, $('#chart').clientWidth), height: chartHeight() });
  }, 100);
});
