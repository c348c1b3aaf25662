// The API client: submit a job, follow its Server-Sent Events, cancel it.
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

/** The answer's JSON, or a ProblemError for a refusal. */
async function payloadOf(response) {
  const type = response.headers.get('content-type') || '';
  const payload = type.includes('json') ? await response.json() : null;
  if (!response.ok) {
    throw new ProblemError(payload || { status: response.status, title: response.statusText });
  }
  return payload;
}

/**
 * Reads the Server-Sent Events of `response`, calling `onEvent(name, data)` for each,
 * until it returns something other than undefined (resolves with that) or the stream
 * ends (resolves with undefined).
 */
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    buffer += value;
    let blank;
    while ((blank = /\r?\n\r?\n/.exec(buffer))) {
      const frame = buffer.slice(0, blank.index);
      buffer = buffer.slice(blank.index + blank[0].length);
      let name = 'message';
      const data = [];
      for (const line of frame.split(/\r?\n/)) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue; // a keep-alive comment
      const result = onEvent(name, data.join('\n'));
      if (result !== undefined) {
        reader.cancel().catch(() => {});
        return result;
      }
    }
  }
}

const RECONNECT_MS = 1000;

/**
 * A client for the service at `baseUrl` (default: where this module was loaded from).
 * `apiKey`, a string or a function that returns one, is sent as a bearer token when the
 * service has keys on. Anyone who can read a page can read a key written into it.
 */
export function createClient(baseUrl = new URL('..', import.meta.url).href, { apiKey } = {}) {
  const base = baseUrl.replace(/\/+$/, '');
  const authorization = () => {
    const key = typeof apiKey === 'function' ? apiKey() : apiKey;
    return key ? { authorization: `Bearer ${key}` } : {};
  };

  async function call(method, path, { body, headers = {} } = {}) {
    const init = { method, headers: { accept: 'application/json', ...authorization(), ...headers } };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return payloadOf(await fetch(`${base}${path}`, init));
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
     * The event stream is read with fetch, not EventSource, which cannot send a key.
     */
    async follow(id, { onStatus, onProgress, signal } = {}) {
      const cancelled = async () => abortError(await client.cancel(id).catch(() => null));
      const url = `${base}/v1/jobs/${encodeURIComponent(id)}/events`;
      for (;;) {
        if (signal?.aborted) throw await cancelled();
        try {
          const response = await fetch(url, { headers: { accept: 'text/event-stream', ...authorization() }, signal });
          if (!response.ok) await payloadOf(response);
          const finished = await readEvents(response, (name, data) => {
            const value = JSON.parse(data);
            if (name === 'status') onStatus?.(value);
            else if (name === 'progress') onProgress?.(value);
            else if (name === 'finished') {
              onStatus?.(value);
              return value;
            }
            return undefined;
          });
          if (finished) return finished;
        } catch (error) {
          if (signal?.aborted) throw await cancelled();
          // A refusal (404, 401) is final; a dropped connection is tried again.
          if (error instanceof ProblemError) throw error;
        }
        // The stream ended early (a restart, a proxy's timeout): the stored job says
        // whether there is anything left to follow.
        const job = await client.job(id);
        if (isTerminal(job.status)) {
          onStatus?.(job);
          return job;
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    },

    /**
     * Submits `request` and waits for its end on the service (`/v1/solve`, up to
     * `waitMs`): the finished job, or the running one when it takes longer.
     */
    solveNow: (request, { waitMs = 10_000 } = {}) =>
      call('POST', `/v1/solve?wait_ms=${waitMs}`, { body: request }),

    /** The difficulty of a Sokoban `level` (XSB): score, label, features and a plan. */
    rate: (level, plan) => call('POST', '/v1/rate', { body: plan ? { level, plan } : { level } }),

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
  const limits = limitsOf(options);
  if (limits) request.limits = limits;
  return request;
}

/** `options.limits`, the fields that are numbers; `undefined` when none is. */
function limitsOf(options) {
  const limits = {};
  for (const field of ['max_nodes', 'timeout_ms']) {
    if (Number.isFinite(options.limits?.[field])) limits[field] = options.limits[field];
  }
  return Object.keys(limits).length ? limits : undefined;
}

/**
 * The job request that makes Sokoban levels: `width`, `height`, `boxes`, `method`,
 * `difficulty`, `count` and `seed` (each optional), and `limits` as `jobRequest` takes them.
 */
export function generateRequest(options = {}) {
  const generate = { type: 'sokoban' };
  for (const field of ['width', 'height', 'boxes', 'method', 'difficulty', 'count', 'seed']) {
    if (options[field] !== undefined && options[field] !== null && options[field] !== '') {
      generate[field] = options[field];
    }
  }
  const limits = limitsOf(options);
  return limits ? { generate, limits } : { generate };
}
