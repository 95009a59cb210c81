// lenlab live page: the classroom (lab/serve/classroom.hpp). On loopback the page has one local
// user and none of this shows but the cancel buttons. In a classroom a browser joins once with the
// class's code and a name (the server keeps the session in an HttpOnly cookie); a student then sees
// only their own runs, the teacher (who joins with the teacher's code) everyone's, with buttons to
// cancel any run and to close or open the queue, and each student's results to download.
// Loaded after chart.js and before app.js; reads app.js's `state`, `$`, `el`, `showErrors`.
'use strict';

const classroom = {
  session: null,   // GET /api/session's answer
  onJoined: null,  // what app.js does once the browser is in the class
};

const role = () => (classroom.session && classroom.session.role) || null;
// The teacher, or the one local user of a loopback server: sees every run, cancels any.
const runsTheClass = () => role() === 'teacher' || role() === 'local';

// Enters the class: true when the page may go on, false when the join form is shown (its submit
// calls classroom.onJoined).
async function enterClass(onJoined) {
  classroom.onJoined = onJoined;
  const response = await fetch('/api/session', { cache: 'no-store' });
  if (!response.ok) throw new Error(`GET /api/session: HTTP ${response.status}`);
  classroom.session = await response.json();
  if (classroom.session.classroom && !classroom.session.role) {
    showJoin(null);
    return false;
  }
  renderClassBar();
  return true;
}

// The join form instead of the page; `why`: a line above it (the session ended, say).
function showJoin(why) {
  $('#join').hidden = false;
  $('main').hidden = true;
  $('#class-bar').hidden = true;
  const box = $('#join-error');
  box.textContent = why || '';
  box.hidden = !why;
  $('#join-code').focus();
}

async function joinClass(event) {
  event.preventDefault();
  for (const box of document.querySelectorAll('#join .field-error, #join-error')) {
    box.textContent = '';
    box.hidden = true;
  }
  const button = $('#join-button');
  button.disabled = true;
  try {
    const response = await fetch('/api/join', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: $('#join-code').value.trim(), name: $('#join-name').value.trim() }),
    });
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      for (const { field, message } of (body && body.errors) || [{ field: null, message: `HTTP ${response.status}` }]) {
        const box = field ? $(`#error-join-${field}`) : $('#join-error');
        box.textContent = message;
        box.hidden = false;
      }
      return;
    }
    $('#join').hidden = true;
    $('main').hidden = false;
    await enterClass(classroom.onJoined);
    await classroom.onJoined();
  } catch (err) {
    const box = $('#join-error');
    box.textContent = `The server did not answer (${err.message}).`;
    box.hidden = false;
  } finally {
    button.disabled = false;
  }
}

// Who this browser is, its results to download; for the teacher the queue switch and each
// student's results.
function renderClassBar() {
  const s = classroom.session;
  const bar = $('#class-bar');
  bar.hidden = !s.classroom;
  if (!s.classroom) return;
  $('#whoami').textContent = s.role === 'teacher'
    ? 'Teacher view: every run'
    : `${s.name} · up to ${s.runs_per_student} runs at once`;
  $('#queue-state').textContent = s.queue_open ? '' : 'The queue is closed.';
  const teacher = s.role === 'teacher';
  $('#teacher-tools').hidden = !teacher;
  $('#my-results').textContent = teacher ? 'Download all results' : 'Download my results';
  if (teacher) {
    $('#queue-toggle').textContent = s.queue_open ? 'Close the queue' : 'Open the queue';
    const pick = $('#student-pick');
    const chosen = pick.value;
    pick.replaceChildren(...(s.students || []).map((n) => new Option(n, n)));
    if ((s.students || []).includes(chosen)) pick.value = chosen;
    showStudentLink();
  }
}

function showStudentLink() {
  const name = $('#student-pick').value;
  const link = $('#student-results');
  link.hidden = !name;
  link.href = `/api/results.csv?student=${encodeURIComponent(name)}`;
}

async function refreshSession() {
  const response = await fetch('/api/session', { cache: 'no-store' });
  if (!response.ok) return;
  classroom.session = await response.json();
  if (classroom.session.classroom && !classroom.session.role) showJoin('Your session ended (the server restarted): join again.');
  else renderClassBar();
}

// Each poll of the run list says whether the queue is open; the teacher's view also refreshes
// the list of students who joined.
function noteQueue(open) {
  const s = classroom.session;
  if (!s || !s.classroom) return;
  if (s.role === 'teacher') { refreshSession(); return; }
  if (open !== undefined && open !== s.queue_open) {
    s.queue_open = open;
    renderClassBar();
  }
}

async function toggleQueue() {
  const open = !classroom.session.queue_open;
  const response = await fetch('/api/queue', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ open }),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    showErrors((body && body.errors) || [{ field: null, message: `HTTP ${response.status}` }]);
  }
  await refreshSession();
}

// Whether this browser may cancel the run: the teacher any, a student one only they submitted.
function mayCancel(run) {
  if (!['queued', 'training', 'evaluating'].includes(run.state)) return false;
  if (runsTheClass()) return true;
  return (run.owners || []).length === 1 && run.owners[0] === classroom.session.name;
}

async function cancelRun(number) {
  const response = await fetch(`/api/runs/${number}`, { method: 'DELETE' });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    showErrors((body && body.errors) || [{ field: null, message: `HTTP ${response.status}` }]);
  }
  schedulePoll(0);
}

// A run as the list and the legend name it: "#3 Ada · length · rope · …" (in a classroom, the
// names that submitted it; on loopback every run is the user's and shows none).
function runTitle(run) {
  const owners = classroom.session && classroom.session.classroom ? (run.owners || []).join(', ') : '';
  return `#${run.number} ${owners ? owners + ' · ' : ''}${run.label || run.id}`;
}

function setUpClassroom() {
  $('#join-form').addEventListener('submit', joinClass);
  $('#queue-toggle').addEventListener('click', toggleQueue);
  $('#student-pick').addEventListener('change', showStudentLink);
}
