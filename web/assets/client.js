// The API client: submit a job, follow it over Server-Sent Events, cancel it.
// Errors from the service are RFC 9457 problem documents and arrive as ProblemError.

/** A problem+json answer: `status`, `title`, `detail` and, for a bad field, `pointer`. */
export class ProblemError extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || `HTTP ${problem.status}`);
    this.name = 'ProblemError';
    this.problem = problem;
  }
}

const TERMINAL = new Set(['solved', 'unsolvable', 'exhausted', 'cancelled', 'failed']);

export function isTerminal(status) {
  return TERMINAL.has(status);
}

// crypto.randomUUID needs a secure context; a page served over plain HTTP on a LAN
// address is not one, but getRandomValues works everywhere.
function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function abortError(job) {
  const error = new DOMException('the job was cancelled', 'AbortError');
  error.job = job;
  return error;
}

/** A client for the service at `baseUrl` (default: where this module was loaded from). */
export function createClient(baseUrl = new URL('..', import.meta.url).href) {
  const base = baseUrl.replace(/\/+$/, '');

  async function call(method, path, { body, headers = {} } = {}) {
    const init = { method, headers: { accept: 'application/json', ...headers } };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`${base}${path}`, init);
    const type = response.headers.get('content-type') || '';
    const payload = type.includes('json') ? await response.json() : null;
    if (!response.ok) {
      throw new ProblemError(payload || { status: response.status, title: response.statusText });
    }
    return payload;
  }

  const client = {
    baseUrl: base,
    capabilities: () => call('GET', '/v1/capabilities'),
    job: (id) => call('GET', `/v1/jobs/${encodeURIComponent(id)}`),
    list: ({ limit = 20, status } = {}) => {
      const query = new URLSearchParams({ limit: String(limit) });
      if (status) query.set('status', status);
      return call('GET', `/v1/jobs?${query}`);
    },
    cancel: (id) => call('POST', `/v1/jobs/${encodeURIComponent(id)}/cancel`),
    /** Queues a job request; a retry with the same key returns the same job. */
    submit: (request, key = idempotencyKey()) =>
      call('POST', '/v1/jobs', { body: request, headers: { 'idempotency-key': key } }),

    /**
     * Follows job `id` until it ends and resolves with the finished job (solved or not:
     * no solution is an outcome, not an error). `onStatus(job)` on each change,
     * `onProgress({nodes_expanded, threshold, elapsed_ms})` while it runs. Aborting
     * `signal` cancels the job and rejects with an AbortError carrying the job.
     */
    follow(id, { onStatus, onProgress, signal } = {}) {
      return new Promise((resolve, reject) => {
        const source = new EventSource(`${base}/v1/jobs/${encodeURIComponent(id)}/events`);
        let settled = false;
        const settle = (fn, value) => {
          if (settled) return;
          settled = true;
          source.close();
          signal?.removeEventListener('abort', onAbort);
          fn(value);
        };
        const onAbort = () => {
          source.close();
          client.cancel(id).then(
            (job) => settle(reject, abortError(job)),
            () => settle(reject, abortError(null)),
          );
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        source.addEventListener('status', (event) => onStatus?.(JSON.parse(event.data)));
        source.addEventListener('progress', (event) => onProgress?.(JSON.parse(event.data)));
        source.addEventListener('finished', (event) => {
          const job = JSON.parse(event.data);
          onStatus?.(job);
          // The server closes the stream now; EventSource would reconnect unless closed.
          settle(resolve, job);
        });
        source.addEventListener('error', () => {
          // A dropped stream reconnects by itself; a refused one (404, CORS) is final,
          // and the stored job then says where things are.
          if (source.readyState !== EventSource.CLOSED || settled) return;
          client.job(id).then(
            (job) => (isTerminal(job.status) ? settle(resolve, job) : settle(reject, new Error('lost the event stream'))),
            (error) => settle(reject, error),
          );
        });
      });
    },

    /** Submits `request` and follows it: see `follow`. */
    async run(request, options = {}) {
      if (options.signal?.aborted) throw abortError(null);
      const job = await client.submit(request);
      options.onStatus?.(job);
      return client.follow(job.id, options);
    },
  };
  return client;
}

/** The job request for `puzzle` with the search options the page and `solve` take. */
export function jobRequest(puzzle, options = {}) {
  const request = { puzzle };
  for (const field of ['algorithm', 'heuristic', 'partition', 'objective', 'weight']) {
    if (options[field] !== undefined && options[field] !== null && options[field] !== '') {
      request[field] = options[field];
    }
  }
  const limits = {};
  for (const field of ['max_nodes', 'timeout_ms']) {
    if (Number.isFinite(options.limits?.[field])) limits[field] = options.limits[field];
  }
  if (Object.keys(limits).length) request.limits = limits;
  return request;
}
