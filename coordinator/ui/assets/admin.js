// What an admin-only panel shows to a token without the admin role: the
// routes answer 403, and the panel says so instead of failing.

import { isForbidden } from './api.js';
import { replace, note } from './dom.js';

const HINT = ' Sign out and sign in with a client token that has the admin role to see them.';

// guard runs load; a 403 replaces the panel with the explanation (what
// needs the admin role, as a sentence).
export async function guard(container, sentence, load) {
  try {
    await load();
  } catch (err) {
    if (!isForbidden(err)) throw err;
    replace(container, note(sentence + HINT, 'locked'));
  }
}
