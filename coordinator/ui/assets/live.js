// The "live" indicator in the top bar: green while refreshes succeed,
// amber when the last one is late, red with the error when one failed.

const box = () => document.getElementById('live');
const label = () => document.getElementById('live-text');

let lastOK = 0;

export function show(on) {
  box().hidden = !on;
}

export function ok(now) {
  lastOK = now;
  box().className = 'live ok';
  label().textContent = 'live';
  box().title = 'refreshed every 2 s';
}

export function failed(err) {
  box().className = 'live err';
  label().textContent = 'offline';
  box().title = String((err && err.message) || err);
}

// tick marks the indicator stale when nothing succeeded for a while.
export function tick(now) {
  if (lastOK && now - lastOK > 6000 && box().className === 'live ok') {
    box().className = 'live stale';
    label().textContent = 'stale';
  }
}
