// lenlab live page: the form that starts runs on `lenlab serve`, the run list, and one uPlot chart of
// test error against length that grows while the runs are evaluated. Plain JS, no build step; the
// only library is the vendored uPlot (global `uPlot`, third_party/uplot/).
'use strict';

const POLL_MS = 500;          // how often the run list is refreshed while a run is unfinished
const RETRY_MS = 2000;        // ... and while the server does not answer
const IDLE_POLL_MS = 5000;    // ... and while every run is finished: others' runs still appear
const FINISHED = new Set(['completed', 'diverged', 'failed']);
const CHART_HEIGHT = 420;
// Okabe-Ito colours (distinguishable with the common colour-vision deficiencies; its yellow, too
// pale on white, swapped for a wine red), by run number so that a run keeps its colour when others
// are hidden.
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#882255'];
const AXIS_FONT = '16px system-ui, sans-serif';
const LABEL_FONT = 'bold 17px system-ui, sans-serif';

const $ = (selector, root = document) => root.querySelector(selector);

const state = {
  options: null,
  runs: new Map(),      // number -> run, as GET /api/runs last returned it
  shown: new Set(),     // numbers whose "show" box is ticked
  seen: new Set(),      // numbers the page has listed (a new one starts shown)
  selected: null,       // the run whose metric (and l_train band) the chart shows
  plot: null,           // the uPlot instance, or null when nothing is drawn
  plotKey: '',          // what the current plot was built for; data alone changes use setData
  pollTimer: null,
  polling: false,
};

// ---------------------------------------------------------------------------------------------
// The form

async function loadOptions() {
  const response = await fetch('/api/options', { cache: 'no-store' });
  if (!response.ok) throw new Error(`GET /api/options: HTTP ${response.status}`);
  const options = await response.json();
  state.options = options;
  const d = options.defaults || {};

  fillSelect($('#task'), options.tasks.map((t) => [t, t]), d.task);
  fillSelect($('#pe'), options.pes.map((p) => [p, p]), d.pe);
  const list = $('#reparam-builtins');
  list.replaceChildren(...options.reparams.map((r) => new Option(r, r)));
  $('#reparam').value = d.reparam ?? '';
  for (const key of ['reparam_shift', 'seed', 'l_train', 'l_test', 'steps']) $('#' + key).value = d[key] ?? '';

  const methods = options.methods || [];
  const plain = methods.find((m) => m.name === 'none') || methods[0];
  fillSelect($('#method'), methods.map((m) => [m.name, m.label || m.name]), plain && plain.name);
  renderMethodSettings();
}

function fillSelect(select, pairs, value) {
  select.replaceChildren(...pairs.map(([v, text]) => new Option(text, v)));
  if (value !== undefined && pairs.some(([v]) => v === value)) select.value = value;
}

function chosenMethod() {
  return (state.options.methods || []).find((m) => m.name === $('#method').value);
}

// One labelled input per setting of the chosen method, each with its own error line.
function renderMethodSettings() {
  const box = $('#method-settings');
  const method = chosenMethod();
  const fields = Object.entries((method && method.settings) || {}).map(([key, value]) => {
    const field = el('div', { class: 'field' });
    const label = el('label', { for: key }, el('code', {}, key));
    const input = el('input', {
      id: key, name: key, autocomplete: 'off', spellcheck: 'false',
      inputmode: typeof value === 'number' ? 'decimal' : 'text',
      'aria-describedby': 'error-' + key,
    });
    input.value = String(value);
    input.dataset.setting = key;
    input.dataset.kind = typeof value;   // how coerce() sends it back
    const error = el('div', { class: 'field-error', id: 'error-' + key, role: 'alert', hidden: '' });
    error.dataset.errorFor = key;
    field.append(label, input, error);
    return field;
  });
  box.replaceChildren(...fields);
  box.hidden = fields.length === 0;
}

// A number stays a number in the JSON; anything else ("train", "", "1e") is sent as typed so that
// the server, not the page, says what is wrong with it.
function coerce(text, kind = 'number') {
  const s = text.trim();
  if (kind !== 'number') return s;
  return s !== '' && Number.isFinite(Number(s)) ? Number(s) : s;
}

function payload() {
  const body = {
    task: $('#task').value,
    pe: $('#pe').value,
    reparam: $('#reparam').value.trim(),
    reparam_shift: coerce($('#reparam_shift').value),
    seed: coerce($('#seed').value),
    l_train: coerce($('#l_train').value),
    l_test: coerce($('#l_test').value),
    steps: coerce($('#steps').value),
  };
  for (const input of document.querySelectorAll('#method-settings input')) {
    body[input.dataset.setting] = coerce(input.value, input.dataset.kind);
  }
  return body;
}

function clearErrors() {
  for (const box of document.querySelectorAll('.field-error')) {
    box.textContent = '';
    box.hidden = true;
  }
  for (const input of document.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
  const general = $('#form-error');
  general.replaceChildren();
  general.hidden = true;
}

// Each error goes under its field; one without a field (or for a field this form does not have)
// goes to the general box, prefixed with the field's name.
function showErrors(errors) {
  for (const { field, message } of errors) {
    const box = field ? document.querySelector(`[data-error-for="${CSS.escape(field)}"]`) : null;
    if (box) {
      box.append(el('p', {}, message));
      box.hidden = false;
      const input = document.getElementById(field);
      if (input) input.setAttribute('aria-invalid', 'true');
    } else {
      const general = $('#form-error');
      general.append(el('p', {}, field ? `${field}: ${message}` : message));
      general.hidden = false;
    }
  }
  const first = document.querySelector('[aria-invalid="true"]');
  if (first) first.focus();
}

async function submitRun(event) {
  event.preventDefault();
  clearErrors();
  const start = $('#start');
  const status = $('#form-status');
  start.disabled = true;   // one request at a time: a double click must not start a run twice
  status.textContent = 'Sending…';
  try {
    const response = await fetch('/api/runs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(payload()),
    });
    let body = null;
    try { body = await response.json(); } catch { /* not JSON: reported below */ }
    if (response.ok && body && body.number !== undefined) {
      state.selected = body.number;           // the chart follows the run just started
      state.shown.add(body.number);
      state.seen.add(body.number);
      status.textContent = body.state === 'queued'
        ? `Run ${body.number} queued (position ${body.queue_position}).`
        : `Run ${body.number}: ${body.state}.`;
      schedulePoll(0);
    } else {
      status.textContent = '';
      const errors = body && Array.isArray(body.errors) ? body.errors
        : [{ field: null, message: `The server answered HTTP ${response.status} without an explanation.` }];
      showErrors(errors);
    }
  } catch (err) {
    status.textContent = '';
    showErrors([{ field: null, message: `The server did not answer (${err.message}). Is lenlab serve still running?` }]);
  } finally {
    start.disabled = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Polling the run list

function schedulePoll(delay) {
  clearTimeout(state.pollTimer);
  state.pollTimer = setTimeout(poll, delay);
}

async function poll() {
  if (state.polling) { schedulePoll(POLL_MS); return; }   // a slow answer is still on its way
  state.polling = true;
  let runs;
  try {
    const response = await fetch('/api/runs', { cache: 'no-store' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    ({ runs } = await response.json());
  } catch (err) {
    setConnection(`Lost contact with the server (${err.message}); retrying…`);
    schedulePoll(RETRY_MS);
    return;
  } finally {
    state.polling = false;
  }
  setConnection(null);
  // Outside the try above: a bug in drawing is an error in the console, not a "lost contact".
  try {
    updateRuns(runs);
  } finally {
    schedulePoll(runs.some((r) => !FINISHED.has(r.state)) ? POLL_MS : IDLE_POLL_MS);
  }
}

function setConnection(message) {
  const box = $('#connection');
  box.textContent = message || '';
  box.hidden = !message;
}

function updateRuns(runs) {
  for (const run of runs) {
    if (!state.seen.has(run.number)) {   // a run this page has not listed yet starts shown
      state.seen.add(run.number);
      state.shown.add(run.number);
    }
    state.runs.set(run.number, run);
    renderRun(run);
  }
  // Only when nothing is selected: a run just submitted may be missing from an answer that was
  // already on its way, and must stay selected.
  if (state.selected === null && runs.length) state.selected = runs[runs.length - 1].number;
  markSelected();
  redraw();
}

// ---------------------------------------------------------------------------------------------
// The run list: one <li data-run="N"> per run, built once and updated in place (so a poll does
// not steal the focus or a half-done click).

function renderRun(run) {
  let item = document.querySelector(`#runs > [data-run="${run.number}"]`);
  if (!item) {
    item = buildRunItem(run.number);
    $('#runs').append(item);
  }
  $('.swatch', item).style.background = colourOf(run.number);
  $('.title', item).textContent = `#${run.number} ${run.label || run.id}`;
  $('.title', item).title = run.id || '';

  const stateText = $('.state', item);
  stateText.textContent = run.state;
  stateText.className = `state state-${run.state}`;

  const queue = $('.queue-position', item);
  const queued = run.state === 'queued' && run.queue_position != null;
  queue.textContent = queued ? `queue position ${run.queue_position}` : '';
  queue.hidden = !queued;

  const busy = run.state === 'training' || run.state === 'evaluating';
  $('.run-progress', item).hidden = !busy;
  const bar = $('progress', item);
  bar.value = run.state === 'completed' ? 1 : clamp01(run.progress ?? 0);
  bar.textContent = `${Math.round(bar.value * 100)} %`;
  $('.phase', item).textContent = run.phase || '';

  const message = $('.message', item);
  message.textContent = run.message || '';
  message.hidden = !run.message;

  const csv = $('a.csv', item);
  csv.hidden = run.state !== 'completed';   // results.csv exists only then (404 before)
  csv.href = `/api/runs/${run.number}/results.csv`;
  csv.download = `${safeName(run.id || 'run-' + run.number)}.csv`;
  $('.figure', item).disabled = !(run.results && run.results.length);
  $('.show', item).checked = state.shown.has(run.number);
}

function buildRunItem(number) {
  const item = el('li', { class: 'run' });
  item.dataset.run = number;
  const show = el('input', { type: 'checkbox', class: 'show', id: `show-${number}` });
  show.addEventListener('change', () => {
    if (show.checked) state.shown.add(number); else state.shown.delete(number);
    redraw();
  });
  const select = el('button', { type: 'button', class: 'select', 'aria-pressed': 'false' },
    el('span', { class: 'swatch', 'aria-hidden': 'true' }), el('span', { class: 'title' }));
  select.addEventListener('click', () => selectRun(number));
  const figure = el('button', { type: 'button', class: 'figure' }, 'Download figure');
  figure.addEventListener('click', () => downloadFigure(number));

  item.append(
    el('div', { class: 'run-head' },
      el('label', { class: 'show-label', for: `show-${number}` }, show, ' show',
        el('span', { class: 'visually-hidden' }, ` run ${number}`)),
      select,
      el('span', { class: 'state' }),
      el('span', { class: 'queue-position', hidden: '' })),
    el('div', { class: 'run-progress', hidden: '' },
      el('progress', { max: '1', value: '0', 'aria-label': `progress of run ${number}` }),
      el('span', { class: 'phase' })),
    el('p', { class: 'message', hidden: '' }),
    el('div', { class: 'run-actions' },
      el('a', { class: 'csv', hidden: '' }, 'Download CSV'),
      figure));
  return item;
}

function selectRun(number) {
  state.selected = number;
  markSelected();
  redraw();
}

function markSelected() {
  for (const item of document.querySelectorAll('#runs > .run')) {
    const selected = Number(item.dataset.run) === state.selected;
    item.classList.toggle('selected', selected);
    $('.select', item).setAttribute('aria-pressed', String(selected));
  }
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
    height: CHART_HEIGHT,
    // A fixed x axis 1..l_test: the curve grows to the right instead of the axis rescaling.
    scales: { x: { time: false, range: () => [xMin, xMax] }, y },
    axes: [
      { label: 'test length', font: AXIS_FONT, labelFont: LABEL_FONT, size: 50, labelSize: 30 },
      {
        label: chosen.metric_label || metric, font: AXIS_FONT, labelFont: LABEL_FONT, size: 80, labelSize: 30,
        // uPlot's default prints 1e-5 as "0"; uPlot passes null for the ticks it leaves unlabelled.
        ...(log ? { values: (u, ticks) => ticks.map((v) => (v == null ? null : formatTick(v))) } : {}),
      },
    ],
    series: [
      { label: 'length' },
      ...model.runs.map((r) => ({
        label: `#${r.number} ${r.label || r.id}`,
        stroke: colourOf(r.number),
        width: r.number === chosen.number ? 3 : 2,
        points: { show: true, size: 7, fill: colourOf(r.number) },
        spanGaps: false,
        value: (u, v) => (v == null ? '--' : String(Number(v.toPrecision(3)))),   // the legend's reading
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
  const legendW = Math.max(0, ...model.runs.map((r) => ctx.measureText(`#${r.number} ${r.label || r.id}`).width));
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
    ctx.fillStyle = colourOf(r.number);
    ctx.fillRect(pad, yMid - 3 * px, 28 * px, 6 * px);
    ctx.fillStyle = '#111';
    ctx.fillText(`#${r.number} ${r.label || r.id}`, pad + 38 * px, yMid + 6 * px);
  });
  const a = el('a', { href: canvas.toDataURL('image/png'), download: `${safeName(state.runs.get(number).id || 'run-' + number)}-${model.chosen.metric}.png` });
  document.body.append(a);
  a.click();
  a.remove();
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

// A tick of the log axis: plain between 0.001 and 10^5, else 1e-5 (shorter than 0.00001).
function formatTick(v) {
  const a = Math.abs(v);
  if (a === 0 || (a >= 1e-3 && a < 1e5)) return String(Number(v.toPrecision(6)));
  return v.toExponential(0).replace('e+', 'e');
}

function colourOf(number) { return PALETTE[(number - 1) % PALETTE.length]; }
function clamp01(x) { return Math.min(1, Math.max(0, Number(x) || 0)); }
function safeName(s) { return String(s).replace(/[^A-Za-z0-9._-]+/g, '_'); }

let resizeTimer = null;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (state.plot) state.plot.setSize({ width: Math.max(320, $('#chart').clientWidth), height: CHART_HEIGHT });
  }, 100);
});

async function main() {
  $('#run-form').addEventListener('submit', submitRun);
  $('#method').addEventListener('change', renderMethodSettings);
  try {
    await loadOptions();
  } catch (err) {
    showErrors([{ field: null, message: `Could not load the form's options (${err.message}). Reload the page.` }]);
    $('#start').disabled = true;
    return;
  }
  schedulePoll(0);   // runs started before this page was opened (or reloaded) are listed too
}

main();
