// The audit view (admin): the newest events first. The API answers
// oldest first from a sequence number, so the first read pages through
// to the end and later refreshes read only what came after.

import { get } from './api.js';
import { guard } from './admin.js';
import { el, replace, table, badge, note } from './dom.js';
import { ago, when } from './format.js';

const KEEP = 500;
const PAGE = 5000;

let events = [];
let after = 0;

export function reset() {
  events = [];
  after = 0;
}

export async function refresh(signal) {
  const body = document.getElementById('audit-body');
  await guard(body, 'The audit log needs an admin token.', async () => {
    for (;;) {
      const page = await get('/v1/audit?limit=' + PAGE + '&after=' + after, signal);
      const evs = page.events || [];
      if (evs.length) {
        events = events.concat(evs).slice(-KEEP);
        after = evs[evs.length - 1].seq;
      }
      if (!page.next_after) break;
    }
    render(body, Date.now());
  });
}

function render(body, now) {
  if (events.length === 0) {
    replace(body, note('No audit events yet.'));
    return;
  }
  const rows = events.slice().reverse().map((e) => {
    const subject = e.subject || e.worker_id || e.credential_id || '';
    const detail = (e.detail || '') + (e.count > 1 ? ' (×' + e.count + ')' : '');
    return el('tr', { class: 'audit-row' },
      el('td', { title: e.time, text: when(e.time) }, el('div', { class: 'sub', text: ago(e.time, now) })),
      el('td', { title: e.kind }, badge(e.kind.split('.')[0], 'kind'), ' ', el('span', { class: 'mono', text: e.kind })),
      el('td', { class: 'cut', title: e.actor || '', text: e.actor || '' }),
      el('td', { class: 'mono cut', title: subject, text: subject }),
      el('td', { class: 'mono cut', title: e.source || '', text: e.source || '' }),
      el('td', { title: [e.route, e.code].filter(Boolean).join(' · ') },
        e.route ? el('div', { class: 'mono cut', text: e.route }) : null, e.code ? el('div', { class: 'sub', text: e.code }) : null),
      el('td', { class: 'reason detail', title: detail, text: detail }));
  });
  replace(body, el('div', { class: 'card flush' },
    table(['Time', 'Event', 'Actor', 'Subject', 'Source', 'Route', 'Detail'], rows, 'audit')));
}
