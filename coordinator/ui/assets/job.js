// The job view: the job, each task with its attempts, exit codes, reasons
// and output. Logs are followed apart (logs.js), so a refresh of this
// panel leaves them alone.

import { get } from './api.js';
import { el, replace, facts, table, badge, note } from './dom.js';
import { ago, between, when, ENDED } from './format.js';
import { command, gpuTerms, runTime } from './jobspec.js';

export async function refresh(id, signal) {
  let job;
  try {
    ({ job } = await get('/v1/jobs/' + encodeURIComponent(id), signal));
  } catch (err) {
    if (err.status !== 404) throw err;
    replace(document.getElementById('job-body'), note('There is no job ' + id + ' (or it was removed after it ended).', 'warn'));
    return;
  }
  render(job, Date.now());
}

function render(job, now) {
  const ended = ENDED.has(job.state);
  const tasks = job.tasks || [];
  const head = el('div', { class: 'card', id: 'job-head' },
    el('div', { class: 'heading' },
      el('h1', { id: 'job-name', text: job.name || job.id }),
      badge(job.state, 'big')),
    job.name ? el('p', { class: 'sub mono', text: job.id }) : null,
    facts([
      ['Executor', job.executor],
      ['Submitted by', job.created_by],
      ['Submitted', el('span', { title: job.created_at, text: when(job.created_at) + ' (' + ago(job.created_at, now) + ')' })],
      job.state === 'pending' ? ['Waiting for', between(job.created_at, null, now)] : null,
      runTime(job, ended, now),
      ['Command', command(job) ? el('code', { id: 'job-command', text: command(job) }) : ''],
      ['GPUs', el('span', { id: 'job-gpus', text: gpuTerms(job) || 'none' })],
      ['Tasks', String(tasks.length)],
      ['Target', job.target ? job.target.kind + ' ' + job.target.id : ''],
      ['Max attempts', job.max_attempts ? String(job.max_attempts) : ''],
      ['Timeout', job.timeout_seconds ? job.timeout_seconds + 's' : ''],
    ]),
    waiting(job, tasks),
    failures(tasks));
  replace(document.getElementById('job-body'), head, tasks.map((t) => taskCard(t, now)));
}

// waiting says why pending tasks wait (pending_reason), each reason once.
function waiting(job, tasks) {
  const reasons = new Set(tasks.map((t) => t.pending_reason).filter(Boolean));
  if (job.pending_reason) reasons.add(job.pending_reason);
  if (reasons.size === 0) return null;
  return el('div', { class: 'callout wait', id: 'job-waiting' },
    el('strong', { text: 'Waiting: ' }),
    [...reasons].map((r) => el('div', { class: 'reason', text: r })));
}

// failures lists the reasons of failed tasks at the top, in plain words.
function failures(tasks) {
  const failed = tasks.filter((t) => t.state === 'failed' && t.reason);
  if (failed.length === 0) return null;
  return el('div', { class: 'callout fail', id: 'job-failure' },
    el('strong', { text: failed.length === 1 ? 'Failed: ' : failed.length + ' tasks failed:' }),
    failed.map((t) => el('div', { class: 'reason', text: (failed.length > 1 ? 'task ' + t.index + ': ' : '') + t.reason })));
}

function taskCard(t, now) {
  const attempts = (t.attempts || []).map((a) => el('tr', null,
    el('td', { text: '#' + a.number }),
    el('td', { text: a.worker_id }),
    el('td', null, badge(a.state)),
    el('td', { class: 'mono', text: (a.devices || []).join(', ') }),
    el('td', { title: a.started_at || a.assigned_at, text: a.started_at ? when(a.started_at) : 'not started' }),
    el('td', { text: a.started_at ? between(a.started_at, a.ended_at || null, now) : '' }),
    el('td', { text: a.exit_code === undefined || a.exit_code === null ? '' : String(a.exit_code) }),
    el('td', { class: 'reason', text: a.reason || '' })));
  return el('div', { class: 'card task', data: { task: t.id } },
    el('div', { class: 'heading' },
      el('h2', { text: 'Task ' + t.index }),
      badge(t.state),
      t.cancel_requested ? badge('cancel requested') : null),
    facts([
      ['Task', el('span', { class: 'mono', text: t.id })],
      ['Worker', t.worker_id],
      ['Devices', (t.devices || []).join(', ')],
      ['Attempt', t.attempt ? String(t.attempt) : ''],
      ['Exit code', t.exit_code === undefined || t.exit_code === null ? '' : String(t.exit_code)],
      ['Reason', t.reason ? el('span', { class: 'reason', text: t.reason }) : ''],
      ['Waiting', t.pending_reason || ''],
    ]),
    attempts.length ? table(['Attempt', 'Worker', 'State', 'Devices', 'Started', 'Ran for', 'Exit', 'Reason'], attempts, 'attempts') : note('No attempt yet.'),
    t.output !== undefined && t.output !== null
      ? el('div', null, el('h3', { text: 'Output' }), el('pre', { class: 'output', text: JSON.stringify(t.output, null, 2) }))
      : null);
}
