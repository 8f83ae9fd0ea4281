// Who the signed-in token is: its name, team and roles from GET
// /v1/auth/self, shown in the top bar. A token minted by single sign-on
// (POST /v1/auth/oidc, gpulayer login) is named sso-… and shows when it
// expires.

import { get } from './api.js';
import { until } from './format.js';

const $ = (id) => document.getElementById(id);

export async function show() {
  const span = $('whoami');
  try {
    const { token } = await get('/v1/auth/self');
    const parts = [token.name, 'team ' + (token.team || 'default'), (token.roles || []).join('+')];
    if (token.expires_at) parts.push('expires ' + until(token.expires_at, Date.now()));
    span.textContent = parts.join(' · ');
    span.title = 'token ' + token.id;
    span.dataset.team = token.team || 'default';
    span.dataset.roles = (token.roles || []).join(',');
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    span.textContent = '';
  }
  span.hidden = !span.textContent;
}

export function clear() {
  const span = $('whoami');
  span.textContent = '';
  span.title = '';
  delete span.dataset.team;
  delete span.dataset.roles;
  span.hidden = true;
}
