// The dashboard's entry point: sign-in, the views behind the #hash, and
// the refresh loop (every 2 s, the shown view only).

import * as api from './api.js';
import * as live from './live.js';
import * as cluster from './cluster.js';
import * as jobs from './jobs.js';
import * as job from './job.js';
import * as logs from './logs.js';
import * as workers from './workers.js';
import * as audit from './audit.js';
import * as reference from './reference.js';
import * as teams from './teams.js';
import * as whoami from './whoami.js';

const REFRESH_MS = 2000;
const VIEWS = ['cluster', 'jobs', 'job', 'teams', 'workers', 'audit', 'api'];
// PUBLIC_VIEWS need no token: shown in place of the sign-in form.
const PUBLIC_VIEWS = ['api'];

const $ = (id) => document.getElementById(id);

let view = { name: 'jobs', arg: '' };
let inflight = null;

function parseHash() {
  const h = location.hash.replace(/^#/, '');
  const slash = h.indexOf('/');
  const name = slash < 0 ? h : h.slice(0, slash);
  const arg = slash < 0 ? '' : decodeURIComponent(h.slice(slash + 1));
  if (!VIEWS.includes(name) || (name === 'job' && !arg)) return { name: 'jobs', arg: '' };
  return { name, arg };
}

function show(name) {
  for (const v of VIEWS) $('view-' + v).hidden = v !== name;
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.view === name || (name === 'job' && a.dataset.view === 'jobs'));
  }
}

function navigate() {
  const next = parseHash();
  if (!api.signedIn()) {
    const open = PUBLIC_VIEWS.includes(next.name);
    view = open ? next : { name: '', arg: '' }; // sign-in opens the others afresh
    $('signin').hidden = open;
    show(open ? next.name : '');
    if (open) refresh();
    return;
  }
  if (next.name === 'job' && (view.name !== 'job' || view.arg !== next.arg)) {
    $('job-body').replaceChildren();
    logs.follow(next.arg);
  } else if (next.name !== 'job') {
    logs.stop();
  }
  view = next;
  document.title = (view.name === 'job' ? view.arg : view.name[0].toUpperCase() + view.name.slice(1)) + ' · GpuLayer';
  show(view.name);
  refresh();
}

function load(signal) {
  switch (view.name) {
    case 'cluster': return cluster.refresh(signal);
    case 'jobs': return jobs.refresh(signal);
    case 'job': return job.refresh(view.arg, signal);
    case 'teams': return teams.refresh(signal);
    case 'workers': return workers.refresh(signal);
    case 'audit': return audit.refresh(signal);
    case 'api': return reference.refresh(signal);
  }
  return Promise.resolve();
}

// refresh reloads the shown view, abandoning a refresh still under way.
async function refresh() {
  if (!api.signedIn() && !PUBLIC_VIEWS.includes(view.name)) return;
  if (inflight) inflight.abort();
  const ctl = new AbortController();
  inflight = ctl;
  try {
    await load(ctl.signal);
    if (inflight === ctl) live.ok(Date.now());
  } catch (err) {
    if (err.name === 'AbortError') return;
    if (api.isUnauthenticated(err)) {
      signOut('The coordinator no longer accepts this token: ' + err.message);
      return;
    }
    live.failed(err);
  } finally {
    if (inflight === ctl) inflight = null;
  }
}

function tick() {
  live.tick(Date.now());
  if ((api.signedIn() || PUBLIC_VIEWS.includes(view.name)) && !document.hidden && !inflight) refresh();
}

async function signIn(ev) {
  ev.preventDefault();
  const input = $('token');
  const token = input.value.trim();
  const error = $('signin-error');
  error.hidden = true;
  if (!token) {
    error.textContent = 'Paste a client token first.';
    error.hidden = false;
    return;
  }
  $('signin-button').disabled = true;
  api.setToken(token);
  try {
    await api.get('/v1/jobs?limit=1');
  } catch (err) {
    api.setToken(null);
    error.textContent = api.isUnauthenticated(err) ? 'The coordinator does not accept this token.'
      : api.isForbidden(err) ? 'This is not a client token with the read role.'
        : 'Could not reach the coordinator: ' + err.message;
    error.hidden = false;
    return;
  } finally {
    $('signin-button').disabled = false;
  }
  input.value = '';
  await whoami.show();
  $('signin').hidden = true;
  $('nav').hidden = false;
  $('signout').hidden = false;
  live.show(true);
  navigate();
}

function signOut(message) {
  api.setToken(null);
  logs.stop();
  view = { name: '', arg: '' }; // the next sign-in opens its view afresh
  if (inflight) inflight.abort();
  jobs.reset();
  audit.reset();
  teams.reset();
  whoami.clear();
  for (const id of ['cluster-body', 'jobs-body', 'job-body', 'teams-body', 'workers-body', 'audit-body', 'logs']) $(id).replaceChildren();
  for (const v of VIEWS) $('view-' + v).hidden = true;
  $('nav').hidden = true;
  $('signout').hidden = true;
  live.show(false);
  $('signin').hidden = false;
  const error = $('signin-error');
  error.textContent = message || '';
  error.hidden = !message;
  document.title = 'GpuLayer dashboard';
  $('token').focus();
}

function start() {
  $('signin-form').addEventListener('submit', signIn);
  $('signout').addEventListener('click', () => signOut(''));
  $('older').addEventListener('click', () => { jobs.older(); refresh(); });
  $('newer').addEventListener('click', () => { jobs.newer(); refresh(); });
  $('page-size').addEventListener('change', () => { jobs.reset(); refresh(); });
  window.addEventListener('hashchange', navigate);
  setInterval(tick, REFRESH_MS);
  navigate(); // a public view (#api) opens without a token
  $('token').focus();
}

start();
