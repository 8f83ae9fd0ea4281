// Human-readable times and sizes.

// duration renders milliseconds as "850ms", "42s", "3m 12s", "2h 5m" or
// "3d 4h".
export function duration(ms) {
  if (!Number.isFinite(ms)) return '';
  if (ms < 0) ms = 0;
  if (ms < 1000) return Math.round(ms) + 'ms';
  let s = Math.floor(ms / 1000);
  if (s < 60) return s + 's';
  let m = Math.floor(s / 60);
  s %= 60;
  if (m < 60) return s ? m + 'm ' + s + 's' : m + 'm';
  let h = Math.floor(m / 60);
  m %= 60;
  if (h < 24) return m ? h + 'h ' + m + 'm' : h + 'h';
  const d = Math.floor(h / 24);
  h %= 24;
  return h ? d + 'd ' + h + 'h' : d + 'd';
}

function parse(iso) {
  if (!iso) return NaN;
  return Date.parse(iso);
}

// between is the duration from one RFC 3339 time to another (or to now).
export function between(fromISO, toISO, now) {
  const a = parse(fromISO);
  const b = toISO ? parse(toISO) : now;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return '';
  return duration(b - a);
}

// ago renders a past time relative to now: "12s ago".
export function ago(iso, now) {
  const t = parse(iso);
  if (!Number.isFinite(t)) return '';
  const d = now - t;
  if (d < 1000) return 'just now';
  return duration(d) + ' ago';
}

// until renders a future time relative to now: "in 5m", or "passed".
export function until(iso, now) {
  const t = parse(iso);
  if (!Number.isFinite(t)) return '';
  const d = t - now;
  return d <= 0 ? 'passed' : 'in ' + duration(d);
}

// when renders a time in the browser's zone, to the second.
export function when(iso) {
  const t = parse(iso);
  if (!Number.isFinite(t)) return '';
  const d = new Date(t);
  const pad = (n) => String(n).padStart(2, '0');
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}

// mib renders a memory size given in MiB: "80 GiB", "512 MiB".
export function mib(n) {
  if (!n) return '';
  if (n >= 1024) {
    const g = n / 1024;
    return (Number.isInteger(g) ? g : g.toFixed(1)) + ' GiB';
  }
  return n + ' MiB';
}

// ENDED are the job and task states that do not change any more.
export const ENDED = new Set(['succeeded', 'failed', 'cancelled']);
