// What a job asks for, in words, and how long it ran: the command it
// runs, its GPU constraints, and its run time measured from its attempts
// (never from its submission: a job that never ran has no run time).

import { between } from './format.js';

// command renders the job's command line: exec's command and args, a
// container's image and command, or another executor's config as JSON.
export function command(job) {
  const c = job.config;
  if (!c || typeof c !== 'object') return '';
  const words = [];
  if (typeof c.command === 'string') words.push(c.command);
  if (Array.isArray(c.command)) words.push(...c.command);
  if (Array.isArray(c.args)) words.push(...c.args);
  const line = words.map(quote).join(' ');
  if (c.image) return 'image ' + c.image + (line ? ': ' + line : '');
  if (line) return line;
  const json = JSON.stringify(c);
  return json === '{}' ? '' : json;
}

// quote shows a word with blanks or quotes the way a shell would take it.
function quote(w) {
  const s = String(w);
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}

// gpuTerms lists the job's GPU constraints: model, memory, compute
// capability, MIG profile, a share, and how tasks spread over workers.
export function gpuTerms(job) {
  const r = job.resources || {};
  const terms = [];
  if (r.gpus) terms.push(r.gpus + (r.mig_profile ? ' MIG device' : ' GPU') + (r.gpus > 1 ? 's' : '') + ' per task');
  if (r.mig_profile) terms.push('profile ' + r.mig_profile);
  if (r.gpu_model) terms.push('model ' + r.gpu_model);
  if (r.gpu_sharing) terms.push('a share of ' + r.gpu_memory_mib + ' MiB of one GPU (' + r.gpu_sharing + ')');
  else if (r.gpu_memory_mib) terms.push('at least ' + r.gpu_memory_mib + ' MiB each');
  if (r.compute_capability) terms.push('compute capability ' + r.compute_capability + ' or more');
  if (job.exclusive_worker) terms.push('alone on its worker (exclusive)');
  if (job.max_per_worker) terms.push('at most ' + job.max_per_worker + ' per worker');
  if (job.gang) terms.push('placed together (gang)');
  return terms.join(', ');
}

// runTime is the label and length of the job's run: none while it waits
// or no attempt has started; from its first start to now while it runs, or to its last
// attempt's end once it ended.
export function runTime(job, ended, now) {
  if (!ended && job.state === 'pending') return null; // it waits (again): no run now
  const attempts = (job.tasks || []).flatMap((t) => t.attempts || []);
  const starts = attempts.map((a) => a.started_at).filter(Boolean).sort();
  if (starts.length === 0) return ended ? ['Ran for', 'never ran'] : null;
  if (!ended) return ['Running for', between(starts[0], null, now)];
  const ends = attempts.map((a) => a.ended_at).filter(Boolean).sort();
  return ['Ran for', between(starts[0], ends.length ? ends[ends.length - 1] : job.updated_at, now)];
}
