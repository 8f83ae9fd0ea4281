// The API client: every call goes to this page's own origin with the
// protocol header and the client token as a bearer token. The token lives
// in this module's closure only: never in storage, a cookie or the URL.

const PROTOCOL_HEADER = 'X-GpuLayer-Protocol';
const PROTOCOL_VERSION = '1';

let token = null;

export function setToken(t) {
  token = t;
}

export function signedIn() {
  return token !== null;
}

// APIError carries the HTTP status and the protocol's error code.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function request(path, signal) {
  const headers = { [PROTOCOL_HEADER]: PROTOCOL_VERSION };
  if (token !== null) {
    headers.Authorization = 'Bearer ' + token;
  }
  return fetch(path, {
    headers,
    signal,
    cache: 'no-store',
    credentials: 'omit',
    redirect: 'error',
    referrerPolicy: 'no-referrer',
  });
}

async function failure(resp) {
  let code = 'http_' + resp.status;
  let message = resp.statusText || 'request failed';
  try {
    const body = await resp.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch (_) {
    // Not the protocol's JSON error body: keep the status line.
  }
  return new APIError(resp.status, code, message);
}

// get reads a JSON answer, throwing APIError for any non-2xx status.
export async function get(path, signal) {
  const resp = await request(path, signal);
  if (!resp.ok) {
    throw await failure(resp);
  }
  return resp.json();
}

// open starts a streaming read (newline-delimited JSON) and answers the
// response, throwing APIError for any non-2xx status.
export async function open(path, signal) {
  const resp = await request(path, signal);
  if (!resp.ok) {
    throw await failure(resp);
  }
  return resp;
}

export function isForbidden(err) {
  return err instanceof APIError && err.status === 403;
}

export function isUnauthenticated(err) {
  return err instanceof APIError && err.status === 401;
}
