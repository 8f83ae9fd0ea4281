// The cluster view: the leader, the coordinator that answers this page,
// and every Raft peer. The status routes are public, so this view works
// with any token.

import { get } from './api.js';
import { el, replace, facts, table, badge, note } from './dom.js';

async function settle(path, signal) {
  try {
    return { value: await get(path, signal) };
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    return { error: err };
  }
}

export async function refresh(signal) {
  const [leader, peers, self] = await Promise.all([
    settle('/v1/status/leader', signal),
    settle('/v1/status/peers', signal),
    settle('/v1/status/self', signal),
  ]);
  const body = document.getElementById('cluster-body');
  replace(body, el('div', { class: 'grid' }, leaderCard(leader), selfCard(self)), peersCard(peers));
  if (leader.error && peers.error && self.error) throw leader.error;
}

function leaderCard(r) {
  const card = el('div', { class: 'card', id: 'leader-card' }, el('h2', { text: 'Leader' }));
  if (r.error) {
    card.append(note(r.error.code === 'no_leader' ? 'The cluster has no leader right now.' : r.error.message, 'warn'));
    return card;
  }
  card.append(facts([
    ['Node', el('strong', { text: r.value.leader_id })],
    ['HTTP', r.value.leader],
    ['Raft', r.value.leader_raft],
  ]));
  return card;
}

function selfCard(r) {
  const card = el('div', { class: 'card', id: 'self-card' }, el('h2', { text: 'This coordinator' }));
  if (r.error) {
    card.append(note(r.error.message, 'warn'));
    return card;
  }
  const s = r.value;
  const role = s.leader_id && s.leader_id === s.node_id ? 'leader' : 'follower';
  card.append(facts([
    ['Node', el('strong', { text: s.node_id })],
    ['Role', badge(role)],
    ['HTTP', s.http_addr],
    ['Raft', s.raft_addr],
    ['Has state', s.has_state ? 'yes' : 'no'],
  ]));
  return card;
}

function peersCard(r) {
  const card = el('div', { class: 'card', id: 'peers-card' }, el('h2', { text: 'Raft peers' }));
  if (r.error) {
    card.append(note(r.error.message, 'warn'));
    return card;
  }
  const rows = (r.value.peers || []).map((p) => el('tr', null,
    el('td', null, el('strong', { text: p.id })),
    el('td', { class: 'mono', text: p.address }),
    el('td', { text: p.suffrage }),
    el('td', null, p.leader ? badge('leader') : '')));
  card.append(table(['Node', 'Raft address', 'Suffrage', ''], rows));
  return card;
}
