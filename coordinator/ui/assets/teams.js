// The teams view: every team the token may see (an admin every team, a
// client its own) with weight, quota, borrow limit and live figures; GPU
// hours per hour over the last day as a stacked SVG chart; and each
// team's running and pending jobs.
//
// GET /v1/usage counts GPU time inside [from, to); windows on the
// hour read its hour buckets whole: the chart asks one window per hour
// (24 requests), at most once a minute, and keeps the answer in between.

import { get } from './api.js';
import { el, replace, table, badge, note } from './dom.js';
import { ago, ENDED } from './format.js';
import { stacked, num, swatch } from './chart.js';

const HOUR_MS = 3600 * 1000;
const WINDOWS = 24;
const CHART_TTL_MS = 60 * 1000;
// JOB_PAGES bounds how far back running and pending work is looked for:
// the newest JOB_PAGES × 100 jobs.
const JOB_PAGES = 5;

let chart = null; // {at, windows}

export function reset() {
  chart = null;
}

// hourWindows are the last WINDOWS whole hours and the hour under way,
// oldest first.
function hourWindows(now) {
  const end = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  const out = [];
  for (let i = WINDOWS; i > 0; i--) {
    const from = new Date(end - i * HOUR_MS);
    out.push({ from, to: new Date(from.getTime() + HOUR_MS), label: String(from.getHours()).padStart(2, '0') + ':00' });
  }
  return out;
}

async function usageWindows(signal, now) {
  if (chart && now - chart.at < CHART_TTL_MS) return chart.windows;
  const windows = await Promise.all(hourWindows(now).map(async (w) => {
    const q = '?group_by=team&from=' + encodeURIComponent(w.from.toISOString()) + '&to=' + encodeURIComponent(w.to.toISOString());
    const u = await get('/v1/usage' + q, signal);
    const values = {};
    for (const r of u.rows || []) values[r.team] = (values[r.team] || 0) + r.gpu_seconds / 3600;
    return { label: w.label, values };
  }));
  chart = { at: now, windows };
  return windows;
}

async function unfinishedJobs(signal) {
  const out = [];
  let after = '';
  for (let i = 0; i < JOB_PAGES; i++) {
    const list = await get('/v1/jobs?limit=100' + (after ? '&after=' + encodeURIComponent(after) : ''), signal);
    for (const j of list.jobs || []) if (!ENDED.has(j.state)) out.push(j);
    after = list.next || '';
    if (!after) break;
  }
  return out;
}

export async function refresh(signal) {
  const now = Date.now();
  const [teams, windows, jobs] = await Promise.all([get('/v1/teams', signal), usageWindows(signal, now), unfinishedJobs(signal)]);
  const list = teams.teams || [];
  render(list, windows, jobs, now);
}

function gpus(v) {
  return +Number(v || 0).toFixed(2);
}

function teamsCard(list) {
  const rows = list.map((t) => el('tr', { class: 'team-row', data: { team: t.name } },
    el('td', null, el('strong', { text: t.name })),
    el('td', { text: gpus(t.weight) }),
    el('td', { text: gpus(t.quota && t.quota.gpus) }),
    el('td', { text: t.borrow_limit ? gpus(t.borrow_limit.gpus) : 'no limit' }),
    el('td', { class: 'gpus-in-use', text: gpus(t.usage && t.usage.gpus_in_use) }),
    el('td', { class: 'running', text: (t.usage && t.usage.running_tasks) || 0 }),
    el('td', { class: 'pending', text: (t.usage && t.usage.pending_tasks) || 0 })));
  return el('div', { class: 'card flush', id: 'teams-card' },
    table(['Team', 'Weight', 'Quota (GPUs)', 'Borrow limit', 'GPUs in use', 'Running tasks', 'Pending tasks'], rows, 'teams'));
}

function chartCard(list, windows) {
  const names = list.map((t) => t.name);
  for (const w of windows) for (const n of Object.keys(w.values)) if (!names.includes(n)) names.push(n);
  const total = windows.reduce((s, w) => s + Object.values(w.values).reduce((a, b) => a + b, 0), 0);
  const legend = el('ul', { class: 'legend' }, names.map((n, i) => el('li', { data: { series: n } },
    swatch(i), n)));
  return el('div', { class: 'card', id: 'usage-card' },
    el('div', { class: 'heading' }, el('h2', { text: 'GPU-hours per hour, last 24 hours' }), el('span', { class: 'spacer' }),
      el('span', { class: 'muted', id: 'usage-total', text: num(total) + ' GPU-hours in all' })),
    stacked('usage-chart', windows, names, 'GPU-hours'), legend,
    el('p', { class: 'muted small', text: 'Attempts count when they end, in the hour they end; running work is in the live figures above.' }));
}

function workCard(team, jobs, now) {
  const mine = jobs.filter((j) => (j.team || 'default') === team);
  const card = el('div', { class: 'card', data: { teamWork: team } }, el('h2', { text: 'Work of ' + team }));
  if (mine.length === 0) {
    card.append(note('Nothing running or pending.'));
    return card;
  }
  const rows = mine.map((j) => {
    const tasks = j.tasks || [];
    const count = (s) => tasks.filter((t) => t.state === s).length;
    return el('tr', { class: 'work-row', data: { job: j.id } },
      el('td', null, el('a', { href: '#job/' + encodeURIComponent(j.id), class: 'mono', text: j.id }),
        j.name ? el('div', { class: 'sub', text: j.name }) : null),
      el('td', null, badge(j.state)),
      el('td', { text: count('running') + count('assigned') }),
      el('td', { text: count('pending') }),
      el('td', { text: j.created_by }),
      el('td', { title: j.created_at, text: ago(j.created_at, now) }));
  });
  card.append(table(['Job', 'State', 'Running tasks', 'Pending tasks', 'Submitted by', 'Submitted'], rows, 'work'));
  return card;
}

function render(list, windows, jobs, now) {
  const body = document.getElementById('teams-body');
  if (list.length === 0) {
    replace(body, note('This token sees no team.'));
    return;
  }
  replace(body, teamsCard(list), chartCard(list, windows), list.map((t) => workCard(t.name, jobs, now)));
}
