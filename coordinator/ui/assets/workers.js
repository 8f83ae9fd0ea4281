// The workers view (admin): each worker's status, drain, heartbeat and
// GPUs with their health.

import { get } from './api.js';
import { guard } from './admin.js';
import { el, replace, facts, table, badge, note } from './dom.js';
import { ago, until, when, mib } from './format.js';

export async function refresh(signal) {
  const body = document.getElementById('workers-body');
  await guard(body, 'Workers need an admin token.', async () => {
    const { workers } = await get('/v1/workers', signal);
    render(body, workers || [], Date.now());
  });
}

function health(d) {
  return d.health || (d.healthy ? 'healthy' : 'unhealthy');
}

function render(body, workers, now) {
  if (workers.length === 0) {
    replace(body, note('No worker has registered yet.'));
    return;
  }
  const devices = workers.flatMap((w) => w.devices || []);
  const healthy = devices.filter((d) => health(d) === 'healthy').length;
  const ready = workers.filter((w) => w.status === 'ready').length;
  replace(body,
    el('p', { class: 'summary', id: 'workers-summary', text: workers.length + ' workers, ' + ready + ' ready · ' + devices.length + ' GPUs, ' + healthy + ' healthy' }),
    workers.map((w) => card(w, now)));
}

function drain(w, now) {
  if (!w.drain_deadline && !w.drained_by) return '';
  const parts = [];
  if (w.drain_deadline) parts.push('tasks stopped ' + until(w.drain_deadline, now) + ' (' + when(w.drain_deadline) + ')');
  if (w.drained_by) parts.push('by ' + w.drained_by);
  if (w.deregistering) parts.push('leaving the cluster');
  return parts.join(', ');
}

function card(w, now) {
  const devices = (w.devices || []).map((d) => el('tr', { class: 'gpu' },
    el('td', { text: String(d.index) }),
    el('td', null, el('strong', { text: d.name }), el('div', { class: 'sub mono', text: d.uuid })),
    el('td', { class: 'nowrap', text: mib(d.memory_mib) }),
    el('td', { text: [d.compute_capability && 'sm ' + d.compute_capability, d.driver_version && 'driver ' + d.driver_version, d.cuda_version && 'CUDA ' + d.cuda_version].filter(Boolean).join(' · ') }),
    el('td', null, badge(health(d))),
    el('td', { class: 'reason', text: d.health_reason || '' })));
  return el('div', { class: 'card worker', data: { worker: w.worker_id } },
    el('div', { class: 'heading' },
      el('h2', { class: 'mono', text: w.worker_id }),
      badge(w.status)),
    facts([
      ['Last heartbeat', w.last_heartbeat ? el('span', { title: w.last_heartbeat, text: ago(w.last_heartbeat, now) }) : 'none to this leader yet'],
      ['Drain', drain(w, now)],
      ['Running tasks', String((w.running_tasks || []).length)],
      ['Executors', (w.executors || []).join(', ')],
      ['Groups', (w.groups || []).join(', ')],
      ['Labels', Object.entries(w.labels || {}).map(([k, v]) => k + '=' + v).join(', ')],
      ['Registered', w.registered_at ? when(w.registered_at) + (w.origin ? ' through ' + w.origin : '') : ''],
    ]),
    devices.length ? table(['#', 'GPU', 'Memory', 'Compute', 'Health', 'Why'], devices, 'gpus') : note('No GPUs.'));
}
