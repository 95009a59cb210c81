// lenlab live page: the form that starts runs on `lenlab serve`, the run list, and one uPlot chart of
// test error against length that grows while the runs are evaluated (drawn by chart.js, loaded
// first: its functions read this file's `state` when called). Plain JS, no build step; the only
// library is the vendored uPlot (global `uPlot`, third_party/uplot/).
'use strict';

const POLL_MS = 500;          // how often the run list is refreshed while a run is unfinished
const RETRY_MS = 2000;        // ... and while the server does not answer
const IDLE_POLL_MS = 5000;    // ... and while every run is finished: others' runs still appear
const FINISHED = new Set(['completed', 'diverged', 'failed', 'cancelled']);

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
  formRun: null,        // the run this form last started: #form-status follows its state
  samples: new Set(),   // numbers whose sample was asked for (a text run's, once completed)
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
  fillSelect($('#corpus'), (options.corpora || []).map((c) => [c, c]));
  showCorpus();
  const list = $('#reparam-builtins');
  list.replaceChildren(...options.reparams.map((r) => new Option(r, r)));
  $('#reparam').value = d.reparam ?? '';
  for (const key of ['reparam_shift', 'seed', 'l_train', 'l_test', 'steps']) $('#' + key).value = d[key] ?? '';

  const methods = options.methods || [];
  const plain = methods.find((m) => m.name === 'none') || methods[0];
  fillSelect($('#method'), methods.map((m) => [m.name, m.label || m.name]), plain && plain.name);
  renderMethodSettings();
}

// The corpus field: for the text task, when the server offers a corpus by name (it takes no path).
function showCorpus() {
  $('#corpus-field').hidden = !($('#task').value === 'text' && (state.options.corpora || []).length);
}

function fillSelect(select, pairs, value) {
  select.replaceChildren(...pairs.map(([v, text]) => new Option(text, v)));
  if (value !== undefined && pairs.some(([v]) => v === value)) select.value = value;
}

function chosenMethod() {
  return (state.options.methods || []).find((m) => m.name === $('#method').value);
}

// The words each method setting is labelled with (the server's rows of settings send them; its key
// stays beside it, small: the server's messages name settings by key). A setting without them is
// labelled with its key in words.
const settingLabel = (key) => (state.options.labels || {})[key] || key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

// One labelled input per setting of the chosen method, each with its own error line.
function renderMethodSettings() {
  const box = $('#method-settings');
  const method = chosenMethod();
  const fields = Object.entries((method && method.settings) || {}).map(([key, value]) => {
    const field = el('div', { class: 'field' });
    const label = el('label', { for: key }, settingLabel(key), ' ', el('code', { class: 'hint' }, key));
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
  if (!$('#corpus-field').hidden) body.corpus = $('#corpus').value;
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
      state.formRun = body.number;
      showFormStatus(body);
      schedulePoll(0);
    } else {
      status.textContent = '';
      state.formRun = null;   // a refused run has no state to follow
      const errors = body && Array.isArray(body.errors) ? body.errors
        : [{ field: null, message: `The server answered HTTP ${response.status} without an explanation.` }];
      showErrors(errors);
    }
  } catch (err) {
    status.textContent = '';
    state.formRun = null;
    showErrors([{ field: null, message: `The server did not answer (${err.message}). Is lenlab serve still running?` }]);
  } finally {
    start.disabled = false;
  }
}

// The line under the button: the last started run's state, as each poll brings it (queued, then
// training or evaluating, then completed, failed or diverged), not the state it had when started.
function showFormStatus(run) {
  const n = run.number;
  const text = {
    queued: `Run ${n} queued${run.queue_position != null ? ` (position ${run.queue_position})` : ''}.`,
    training: `Run ${n} training…`,
    evaluating: `Run ${n} evaluating…`,
    completed: `Run ${n} completed: its curve is on the chart.`,
  }[run.state] || `Run ${n} ${run.state}${run.message ? `: ${run.message}` : '.'}`;
  const status = $('#form-status');
  status.textContent = text;
  status.dataset.state = run.state;
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
    if (response.status === 401) {   // the server restarted: its sessions are gone
      showJoin('Your session ended (the server restarted): join again.');
      return;
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const answer = await response.json();
    runs = answer.runs;
    noteQueue(answer.queue_open);
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
    if (run.number === state.formRun) showFormStatus(run);
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
  $('.swatch', item).style.background = swatchBackground(run.number);
  $('.title', item).textContent = runTitle(run);
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
  $('.cancel', item).hidden = !mayCancel(run);
  $('.show', item).checked = state.shown.has(run.number);
  if (run.state === 'completed' && run.settings && run.settings.task === 'text' &&
      !state.samples.has(run.number)) {
    state.samples.add(run.number);
    loadSample(run.number, $('.sample', item));
  }
}

// A completed text run's sample (GET /api/runs/N/sample): what it writes after the first characters
// of its corpus's test split, greedily. Shown as text, never as markup: it is the corpus's bytes.
async function loadSample(number, box) {
  try {
    const response = await fetch(`/api/runs/${number}/sample`, { cache: 'no-store' });
    const answer = await response.json();
    if (!response.ok) {
      const first = answer.errors && answer.errors[0];
      throw new Error(first ? first.message : `HTTP ${response.status}`);
    }
    $('.sample-prompt', box).textContent = answer.prompt;
    $('.sample-text', box).textContent = answer.text;
    $('.sample-caption', box).textContent =
      `What run ${number} writes (${answer.tokens} characters, ${answer.decoding}) after the test text's first characters:`;
  } catch (err) {
    $('.sample-caption', box).textContent = `No sample (${err.message}).`;
  }
  box.hidden = false;
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
  const cancel = el('button', { type: 'button', class: 'cancel', hidden: '' }, 'Cancel');
  cancel.addEventListener('click', () => cancelRun(number));

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
    el('figure', { class: 'sample', hidden: '' },
      el('figcaption', { class: 'sample-caption' }),
      el('pre', {}, el('span', { class: 'sample-prompt' }), el('strong', { class: 'sample-text' }))),
    el('div', { class: 'run-actions' },
      el('a', { class: 'csv', hidden: '' }, 'Download CSV'),
      figure, cancel));
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
// Small helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

function clamp01(x) { return Math.min(1, Math.max(0, Number(x) || 0)); }
function safeName(s) { return String(s).replace(/[^A-Za-z0-9._-]+/g, '_'); }

async function main() {
  $('#run-form').addEventListener('submit', submitRun);
  $('#method').addEventListener('change', renderMethodSettings);
  $('#task').addEventListener('change', showCorpus);
  setUpClassroom();
  try {
    if (await enterClass(start)) await start();
  } catch (err) {
    showErrors([{ field: null, message: `Could not reach the server (${err.message}). Reload the page.` }]);
  }
}

// The page proper, once this browser may use it (at once on loopback, after the join in a class).
async function start() {
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
