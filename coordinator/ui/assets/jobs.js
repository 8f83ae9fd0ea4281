// The jobs view: one page of jobs, newest first, with the API's cursor
// paging (GET /v1/jobs?limit=&after=).

import { get } from './api.js';
import { el, replace, table, badge, note } from './dom.js';
import { ago, between, ENDED } from './format.js';

// cursors[i] is the after= of page i; the first page has none.
let cursors = [''];
let next = '';

export function reset() {
  cursors = [''];
  next = '';
}

function pageSize() {
  return document.getElementById('page-size').value;
}

export async function refresh(signal) {
  const after = cursors[cursors.length - 1];
  const q = '?limit=' + encodeURIComponent(pageSize()) + (after ? '&after=' + encodeURIComponent(after) : '');
  const list = await get('/v1/jobs' + q, signal);
  next = list.next || '';
  render(list.jobs || [], Date.now());
}

export function older() {
  if (next) cursors.push(next);
}

export function newer() {
  if (cursors.length > 1) cursors.pop();
}

function summary(tasks) {
  const total = tasks.length;
  const done = tasks.filter((t) => t.state === 'succeeded').length;
  const failed = tasks.filter((t) => t.state === 'failed').length;
  let s = done + '/' + total + ' done';
  if (failed) s += ', ' + failed + ' failed';
  return s;
}

function gpus(job) {
  const n = job.resources && job.resources.gpus;
  return n ? String(n) : '';
}

function render(jobs, now) {
  const body = document.getElementById('jobs-body');
  document.getElementById('older').disabled = !next;
  document.getElementById('newer').disabled = cursors.length <= 1;
  document.getElementById('page-label').textContent = 'page ' + cursors.length;
  if (jobs.length === 0) {
    replace(body, note(cursors.length > 1 ? 'No more jobs.' : 'No jobs yet.'));
    return;
  }
  const rows = jobs.map((j) => {
    const tasks = j.tasks || [];
    const ended = ENDED.has(j.state);
    return el('tr', { class: 'job-row', data: { job: j.id } },
      el('td', null, el('a', { href: '#job/' + encodeURIComponent(j.id), class: 'mono', text: j.id }),
        j.name ? el('div', { class: 'sub', text: j.name }) : null),
      el('td', null, badge(j.state)),
      el('td', { text: summary(tasks) }),
      el('td', { text: j.executor }),
      el('td', { text: gpus(j) }),
      el('td', { text: j.created_by }),
      el('td', { title: j.created_at, text: ago(j.created_at, now) }),
      el('td', { text: between(j.created_at, ended ? j.updated_at : null, now) + (ended ? '' : ' so far') }));
  });
  replace(body, el('div', { class: 'card flush' },
    table(['Job', 'State', 'Tasks', 'Executor', 'GPUs', 'Submitted by', 'Submitted', 'Ran for'], rows, 'jobs')));
}
