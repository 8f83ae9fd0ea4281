// The API view: the coordinator's own OpenAPI 3.1 description
// (GET /v1/openapi.json), as a table of its operations with the
// credential each takes, and the document itself to copy. The document
// needs no credential, so the view works signed in or not; it is read
// once, since it changes only with the coordinator's binary.

import { get } from './api.js';
import { el, replace, table, note } from './dom.js';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

let doc = null;
let shown = false; // rendered once: a refresh would close the open document

// credential names who may call an operation, from its security list.
function credential(op) {
  const reqs = op.security || [];
  if (reqs.length === 0) return 'none';
  return reqs.map((r) => Object.entries(r).map(([scheme, roles]) =>
    scheme + (roles.length ? ' (' + roles.join(', ') + ')' : '')).join(' + ')).join(' or ');
}

function operations(d) {
  const out = [];
  for (const path of Object.keys(d.paths).sort()) {
    for (const m of METHODS) {
      const op = d.paths[path][m];
      if (op) out.push({ method: m.toUpperCase(), path, op });
    }
  }
  return out;
}

export async function refresh(signal) {
  const body = document.getElementById('api-body');
  if (shown) return;
  if (!doc) {
    doc = await get('/v1/openapi.json', signal);
  }
  shown = true;
  const ops = operations(doc);
  const rows = ops.map(({ method, path, op }) => el('tr', { class: 'api-row', data: { op: op.operationId } },
    el('td', { class: 'mono', text: method }),
    el('td', { class: 'mono', text: path }),
    el('td', { text: op.summary || '' }, el('div', { class: 'sub mono', text: op.operationId })),
    el('td', { class: 'mono', text: (op.tags || []).join(', ') }),
    el('td', { class: 'mono', text: credential(op) })));
  replace(body,
    note('OpenAPI ' + doc.openapi + ' · protocol version ' + doc.info.version + ' · ' + ops.length +
      ' operations. Fetch it with the header X-GpuLayer-Protocol: 1 and no credential; docs/api.md says how to generate a client from it.'),
    el('div', { class: 'card flush' }, table(['Method', 'Path', 'Summary', 'Tag', 'Credential'], rows, 'api')),
    el('details', { class: 'card' }, el('summary', { text: 'The document (JSON)' }),
      el('pre', { id: 'api-json', class: 'logs', text: JSON.stringify(doc, null, 2) })));
}
