// DOM helpers. Everything the dashboard shows is built with
// createElement and text nodes: data from the API (task output, reasons,
// names) is never parsed as HTML.

// el creates an element. props: class, text, title, href (only links
// inside the page, "#…"), id, and data (an object of data-* values).
// Children are nodes, strings (as text), arrays of either, or null.
export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  const p = props || {};
  if (p.class) node.className = p.class;
  if (p.id) node.id = p.id;
  if (p.title) node.title = p.title;
  if (p.text !== undefined && p.text !== null) node.textContent = String(p.text);
  if (p.href !== undefined) {
    if (!String(p.href).startsWith('#')) {
      throw new Error('only links inside the page are made');
    }
    node.setAttribute('href', p.href);
  }
  if (p.data) {
    for (const [k, v] of Object.entries(p.data)) node.dataset[k] = String(v);
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else if (c instanceof Node) node.appendChild(c);
    else node.appendChild(document.createTextNode(String(c)));
  }
}

// replace swaps a container's children for new ones.
export function replace(container, ...children) {
  const frag = document.createDocumentFragment();
  append(frag, children);
  container.replaceChildren(frag);
}

// badge is a small coloured label; its colour follows the value (a job,
// task, worker or health state).
export function badge(value, extra) {
  const v = String(value || 'unknown');
  return el('span', { class: 'badge s-' + v.replace(/[^a-z_]/g, '') + (extra ? ' ' + extra : ''), text: v });
}

// table builds a table from a header row and rows of cells.
export function table(headers, rows, cls) {
  return el('table', { class: cls || '' },
    el('thead', null, el('tr', null, headers.map((h) => el('th', { text: h })))),
    el('tbody', null, rows));
}

// note is a muted message in place of a panel's content.
export function note(text, cls) {
  return el('p', { class: 'note ' + (cls || '') , text });
}

// facts is a definition list of [label, value] pairs, skipping empty
// values and pairs left out (null).
export function facts(pairs) {
  const dl = el('dl', { class: 'facts' });
  for (const pair of pairs) {
    if (!pair) continue;
    const [k, v] = pair;
    if (v === undefined || v === null || v === '') continue;
    dl.append(el('dt', { text: k }), el('dd', null, v));
  }
  return dl;
}
