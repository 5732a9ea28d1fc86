// The dashboard's only contact with the server: JSON GETs and the Server-Sent Events stream,
// all relative to the page's own URL (so the dashboard works behind a path prefix and never
// leaves its origin).

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

// GET api/v1/<path>?params as JSON; throws ApiError with the server's {"error"} text.
export async function getJson(path, params) {
  const query = params
    ? `?${Object.entries(params).filter(([, v]) => v != null).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`
    : '';
  let response;
  try {
    response = await fetch(`api/v1/${path}${query}`, { headers: { Accept: 'application/json' }, cache: 'no-store' });
  } catch (e) {
    throw new ApiError(`${path}: ${e.message}`, 0);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(`${path}: ${(body && body.error) || response.statusText || response.status}`, response.status);
  return body;
}

const kBackoffSeconds = [1, 2, 4, 8, 15, 30];

// The live stream (api/v1/stream). Reconnects with backoff after an error or when nothing has
// arrived for a long time (a dead connection that never errored).
//
// handlers: onSnapshot(json), onEvent(json), onState('connecting'|'open'|'retrying', detail)
export class StreamClient {
  constructor(handlers) {
    this.handlers = handlers;
    this.source = null;
    this.attempt = 0;
    this.retry_timer = 0;
    this.watch_timer = 0;
    this.last_message_ms = 0;
    this.silence_limit_ms = 45000;
  }

  start() {
    this.connect();
    this.watch_timer = setInterval(() => this.watch(), 1000);
  }

  // interval_seconds from the snapshot: silence longer than 10 intervals (at least 45 s, past
  // the server's 15 s keepalive, which EventSource does not report) means a dead connection.
  setInterval(seconds) {
    if (seconds > 0) this.silence_limit_ms = Math.max(45000, seconds * 10000);
  }

  connect() {
    this.close();
    this.handlers.onState('connecting');
    const source = new EventSource('api/v1/stream');
    this.source = source;
    this.opened_ms = Date.now();
    source.onopen = () => {
      if (this.source !== source) return;
      this.handlers.onState('open');
    };
    source.addEventListener('snapshot', (e) => this.deliver(source, e, this.handlers.onSnapshot));
    source.addEventListener('event', (e) => this.deliver(source, e, this.handlers.onEvent));
    source.onerror = () => {
      if (this.source !== source) return;
      this.scheduleRetry('connection lost');
    };
  }

  deliver(source, message, handler) {
    if (this.source !== source) return;
    this.attempt = 0;
    this.last_message_ms = Date.now();
    let data;
    try {
      data = JSON.parse(message.data);
    } catch {
      return; // a malformed message is skipped, the stream goes on
    }
    handler(data);
  }

  scheduleRetry(reason) {
    this.close();
    const delay = kBackoffSeconds[Math.min(this.attempt, kBackoffSeconds.length - 1)];
    this.attempt++;
    this.handlers.onState('retrying', { reason, delay });
    this.retry_timer = setTimeout(() => this.connect(), delay * 1000);
  }

  watch() {
    if (!this.source) return;
    const since = Math.max(this.last_message_ms, this.opened_ms);
    if (Date.now() - since > this.silence_limit_ms) this.scheduleRetry('no data');
  }

  close() {
    clearTimeout(this.retry_timer);
    if (this.source) {
      this.source.onerror = null;
      this.source.close();
    }
    this.source = null;
  }
}
