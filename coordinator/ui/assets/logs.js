// Live logs of one job: GET /v1/jobs/{id}/logs?follow=1 is read as a
// stream of newline-delimited entries and appended as text. When the
// stream ends before the job has (the coordinator bounds a stream's
// life, a leader changes), it is opened again and the entries already
// shown are skipped.

import { open, get } from './api.js';
import { el } from './dom.js';
import { ENDED } from './format.js';

const MAX_CHARS = 2 * 1024 * 1024;

let current = null;

export function stop() {
  if (current) {
    current.abort.abort();
    current = null;
  }
}

// follow shows the logs of job id, replacing whatever was shown.
export function follow(id) {
  stop();
  const pane = document.getElementById('logs');
  pane.replaceChildren();
  const run = { id, abort: new AbortController(), seen: new Set(), last: '', chars: 0 };
  current = run;
  loop(run, pane);
}

function setState(text, cls) {
  const b = document.getElementById('logs-state');
  b.textContent = text;
  b.className = 'badge ' + cls;
}

async function loop(run, pane) {
  let delay = 500;
  while (current === run) {
    try {
      setState('following', 'following');
      await readStream(run, pane);
      const { job } = await get('/v1/jobs/' + encodeURIComponent(run.id), run.abort.signal);
      if (ENDED.has(job.state)) {
        setState('complete', 'complete');
        if (pane.childElementCount === 0) pane.append(el('span', { class: 'muted', text: 'This job wrote no output.' }));
        return;
      }
      delay = 500;
    } catch (err) {
      if (err.name === 'AbortError' || current !== run) return;
      if (err.status === 401 || err.status === 403 || err.status === 404) {
        setState(err.message, 'error');
        return;
      }
      setState(err.status === 429 ? 'waiting for a stream slot' : 'reconnecting: ' + err.message, 'reconnecting');
      delay = Math.min(delay * 2, 10000);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

async function readStream(run, pane) {
  const resp = await open('/v1/jobs/' + encodeURIComponent(run.id) + '/logs?follow=1', run.abort.signal);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim() !== '') show(run, pane, JSON.parse(line));
    }
  }
}

function show(run, pane, e) {
  const key = e.task_id + '/' + e.attempt + '/' + e.stream + '/' + e.seq;
  if (run.seen.has(key)) return;
  run.seen.add(key);
  const atBottom = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 4;
  const who = e.task_id + '/' + e.attempt;
  if (who !== run.last) {
    pane.append(el('span', { class: 'log-head', text: 'task ' + e.index + ', attempt ' + e.attempt + '\n' }));
    run.last = who;
  }
  pane.append(el('span', { class: 'log-' + (e.stream === 'stderr' ? 'stderr' : 'stdout'), text: e.data }));
  run.chars += e.data.length;
  while (run.chars > MAX_CHARS && pane.firstChild) {
    run.chars -= pane.firstChild.textContent.length;
    pane.firstChild.remove();
  }
  if (atBottom) pane.scrollTop = pane.scrollHeight;
}
