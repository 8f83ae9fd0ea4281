// The workers view (admin): the fleet's GPUs and what runs on each, then
// each worker's status, drain, heartbeat and GPUs with their health.

import { get } from './api.js';
import { guard } from './admin.js';
import { el, replace, facts, table, badge, note } from './dom.js';
import { ago, until, when, mib } from './format.js';

export async function refresh(signal) {
  const body = document.getElementById('workers-body');
  await guard(body, 'Workers need an admin token.', async () => {
    const [{ workers }, { gpus }] = await Promise.all([get('/v1/workers', signal), get('/v1/gpus', signal)]);
    render(body, workers || [], gpus || [], Date.now());
  });
}

function health(d) {
  return d.health || (d.healthy ? 'healthy' : 'unhealthy');
}

// counts sorts GPUs as the CLI does: given work (healthy), awaiting an
// admin's approval, or neither (the coordinator shows the GPUs of an
// offline or revoked worker as neither).
function counts(devices) {
  const awaiting = devices.filter((d) => d.pending_approval).length;
  const healthy = devices.filter((d) => !d.pending_approval && d.healthy).length;
  return { healthy, awaiting, unhealthy: devices.length - healthy - awaiting };
}

function render(body, workers, gpus, now) {
  if (workers.length === 0) {
    replace(body, note('No worker has registered yet.'));
    return;
  }
  const devices = workers.flatMap((w) => w.devices || []);
  const n = counts(devices);
  const ready = workers.filter((w) => w.status === 'ready').length;
  replace(body,
    el('p', { class: 'summary', id: 'workers-summary', text: workers.length + ' workers, ' + ready + ' ready · ' + devices.length + ' GPUs: ' +
      n.healthy + ' healthy, ' + n.unhealthy + ' unhealthy, ' + n.awaiting + ' awaiting approval' }),
    fleet(gpus),
    workers.map((w) => card(w, now)));
}

// fleet is the table of every GPU and what runs on it (GET /v1/gpus).
function fleet(gpus) {
  if (gpus.length === 0) return null;
  const rows = gpus.map((g) => el('tr', { class: 'fleet-gpu', data: { uuid: g.uuid } },
    el('td', { class: 'mono', text: g.worker_id }),
    el('td', null, el('strong', { text: g.name }), el('div', { class: 'sub mono', text: g.uuid })),
    el('td', { text: g.parent_uuid ? g.mig_profile + ' of ' + g.parent_uuid : g.mig_enabled ? 'MIG mode' : '' }),
    el('td', { title: g.health_reason || '' }, badge(g.pending_approval ? 'awaiting approval' : health(g))),
    el('td', null, (g.tasks || []).length === 0
      ? el('span', { class: 'sub', text: g.use === 'mig' ? 'as its MIG devices' : 'free' })
      : g.tasks.map((t) => el('div', null, el('a', { href: '#job/' + encodeURIComponent(t.job_id), class: 'mono', text: t.job_id }),
        el('span', { class: 'sub mono', text: ' ' + t.task_id + (t.share_mib ? ' (' + mib(t.share_mib) + ')' : '') })))),
    el('td', { class: 'nowrap', text: g.use === 'shared' ? mib(g.shared_mib) + ' of ' + mib(g.memory_mib) : mib(g.memory_mib) })));
  return el('div', { class: 'card flush', id: 'gpu-fleet' }, table(['Worker', 'GPU', 'MIG', 'Health', 'Runs', 'Memory'], rows, 'fleet'));
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
