/**
 * The JSON-RPC client of the RPC source: HTTP transport, credentials (URL user/password or
 * cookie file), JSON-RPC framing of single calls and batches, retry of transient failures with
 * capped exponential back-off (one log line per retry) and the cases that fail at once
 * (authentication, a port that is not HTTP, an unknown host, an answer that is not JSON-RPC, a
 * refused connection before the node ever answered unless `waitMs` waits for it to listen).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { NETWORKS, type Network } from '../../chain/networks.js';

export interface RpcClientOptions {
  /** The network, when known: picks the default cookie file (else the one whose RPC port the URL uses). */
  network?: Network;
  /** Cookie file (`__cookie__:<password>`); default: the node's cookie for the network when it exists. */
  cookieFile?: string;
  /** Per-request timeout (default 120 s). */
  timeoutMs?: number;
  /**
   * Back-off budget of one failing call (default 120 s): it is tried
   * `retryAttempts(giveUpMs, retryInitialMs, retryMaxMs)` times at most (20 with the
   * defaults), so it gives up after giveUpMs plus the time the attempts themselves took.
   */
  giveUpMs?: number;
  /** First back-off delay (default 250 ms); doubles per retry up to retryMaxMs (default 8 s). */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /**
   * How long a node that refuses connections before it has ever answered is waited for (a node
   * that is starting; default 0: fail at once). Refusals after an answer follow the retry policy.
   */
  waitMs?: number;
  /** Where each retry is announced, one line each (default: stderr). */
  log?: (line: string) => void;
  /** Home directory for the default cookie path (default os.homedir()). */
  homeDir?: string;
}

export interface RpcClient {
  /** The URL without password, as named in every error and log line. */
  readonly where: string;
  /** Retries (first 50) and other problems worked around, one line each. */
  readonly warnings: string[];
  /** Calls one method; an error answer is an RpcError. */
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** One batch of calls of a method; per-item answers in request order (RpcError objects for failed items). */
  batch(method: string, paramsList: unknown[][]): Promise<(unknown | RpcError)[]>;
}

/** An error answer of the node (code + message), not retried (except -28). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    readonly method: string,
    where: string,
  ) {
    super(`RPC ${where}: ${method} failed: ${rpcMessage} (code ${code})`);
    this.name = 'RpcError';
  }
}

export class TransientError extends Error {}
/** A refused connection while waiting for a node to listen: retried within `waitMs`, not counted as an attempt. */
class NotListeningError extends TransientError {}
/** Not worth retrying (authentication). */
class FatalError extends Error {}

/** Longest back-off while waiting for a node to listen: it is found soon after it starts. */
const WAIT_POLL_MAX_MS = 1000;

/** The default cookie file a node writes for a network. */
export function defaultCookiePath(network: Network, home = homedir()): string {
  const dataDir = network.name.startsWith('namecoin') ? '.namecoin' : '.bitcoin';
  return join(home, dataDir, network.cookieDir, '.cookie');
}

/** The URL as shown in logs and errors: no password. */
export function redactUrl(url: URL): string {
  const u = new URL(url.href);
  u.password = '';
  return u.href;
}

/** Attempts of one call the retry policy allows: the first, plus every back-off wait that fits in `giveUpMs`. */
export function retryAttempts(giveUpMs: number, initialMs: number, maxMs: number): number {
  let attempts = 1;
  let waited = 0;
  for (let delay = initialMs; waited + delay <= giveUpMs; delay = Math.min(delay * 2, maxMs)) {
    waited += delay;
    attempts++;
  }
  return attempts;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string } | null;
  id?: unknown;
}

function errorText(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as Error & { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as NodeJS.ErrnoException).code;
      return `${e.message}: ${code ? `${code} ` : ''}${cause.message}`;
    }
    return e.message;
  }
  return String(e);
}

/** A redirect's Location as shown in an error: the absolute URL it points to, without password. */
function shownLocation(location: string, base: URL): string {
  try {
    return redactUrl(new URL(location, base));
  } catch {
    return JSON.stringify(location);
  }
}

/** Opens a client: parses the URL and finds the credentials (no request is made). */
export function rpcClient(url: string, opts: RpcClientOptions = {}): RpcClient {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`RPC URL "${url.replace(/\/\/[^@/]*@/, '//***@')}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`RPC URL ${redactUrl(parsed)}: only http: and https: are supported`);
  }
  const where = redactUrl(parsed);
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const giveUpMs = opts.giveUpMs ?? 120_000;
  const retryInitialMs = opts.retryInitialMs ?? 250;
  const retryMaxMs = opts.retryMaxMs ?? 8_000;
  const maxAttempts = retryAttempts(giveUpMs, retryInitialMs, retryMaxMs);
  const waitMs = opts.waitMs ?? 0;
  const log = opts.log ?? ((line: string) => void process.stderr.write(line + '\n'));
  const warnings: string[] = [];
  const MAX_RETRY_WARNINGS = 50;
  let retryWarnings = 0;

  // ---- credentials ----
  let authorization: string | undefined;
  let authFrom = 'no credentials';
  if (parsed.username || parsed.password) {
    const user = decodeURIComponent(parsed.username);
    const pass = decodeURIComponent(parsed.password);
    authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    authFrom = 'the user and password in the URL';
  } else {
    let cookie = opts.cookieFile;
    let explicit = true;
    if (cookie === undefined) {
      explicit = false;
      const net = opts.network ?? Object.values(NETWORKS).find((n) => String(n.rpcPort) === parsed.port);
      if (net) cookie = defaultCookiePath(net, opts.homeDir);
    }
    if (cookie !== undefined && (explicit || existsSync(cookie))) {
      let text: string;
      try {
        text = readFileSync(cookie, 'utf8').trim();
      } catch (e) {
        throw new Error(`RPC ${where}: cannot read cookie file ${cookie} (${(e as Error).message})`, { cause: e });
      }
      if (!text.includes(':')) throw new Error(`RPC ${where}: cookie file ${cookie} does not hold "user:password"`);
      authorization = `Basic ${Buffer.from(text).toString('base64')}`;
      authFrom = `cookie file ${cookie}`;
    }
  }
  const endpoint = new URL(parsed.href);
  endpoint.username = '';
  endpoint.password = '';

  // ---- transport with retries ----
  let nextId = 1;
  // Whether the node has answered (any HTTP answer), and when the first request went out.
  let answered = false;
  let firstRequestAt: number | undefined;

  async function post(body: unknown, what: string): Promise<{ status: number; json: unknown }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization) headers.authorization = authorization;
    let res: Response;
    let text: string;
    firstRequestAt ??= Date.now();
    try {
      // The node is the URL the user gave: a redirect is reported, never followed (fetch would
      // re-send the credentials and the calls to wherever the Location points).
      res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      answered = true;
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel().catch(() => undefined);
        const location = res.headers.get('location');
        throw new FatalError(
          `RPC ${where}: ${what}: HTTP ${res.status} ${location === null ? 'redirect without a Location' : `redirect to ${shownLocation(location, endpoint)}`} (not followed: give the node's own RPC URL)`,
        );
      }
      if (res.status === 401 || res.status === 403) {
        await res.body?.cancel().catch(() => undefined);
        throw new FatalError(
          `RPC ${where}: ${what}: authentication failed (HTTP ${res.status}) using ${authFrom}; give rpc:http://user:password@host:port or --rpc-cookie <path>`,
        );
      }
      text = await res.text();
    } catch (e) {
      if (e instanceof FatalError) throw e;
      if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
        throw new TransientError(`${what}: no answer within ${timeoutMs} ms`);
      }
      const cause = e instanceof Error ? (e as Error & { cause?: Error & { code?: string } }).cause : undefined;
      if (cause?.message === 'bad port') {
        throw new FatalError(
          `RPC ${where}: ${what}: port ${endpoint.port} is refused by Node ("bad port": reserved for another protocol); give the node's RPC port (e.g. 8332 for Bitcoin, 8336 for Namecoin)`,
        );
      }
      if (cause?.code?.startsWith('HPE_')) {
        throw new FatalError(`RPC ${where}: ${what}: the answer is not HTTP (${cause.code}: ${cause.message}); is this the node's RPC port (not its P2P port)?`);
      }
      if (cause?.code === 'ENOTFOUND') throw new FatalError(`RPC ${where}: ${what}: host ${endpoint.hostname} not found`);
      if (cause?.code === 'ECONNREFUSED' && !answered) {
        // Nothing listens and nothing ever did: a stopped node fails now, a starting one is waited for.
        const waited = Date.now() - firstRequestAt;
        if (waited >= waitMs) {
          throw new FatalError(
            waitMs > 0
              ? `RPC ${where}: ${what}: connection refused (${errorText(e)}): nothing listened within ${waitMs} ms (--rpc-wait)`
              : `RPC ${where}: ${what}: connection refused (${errorText(e)}): is the node running? --rpc-wait <time> (e.g. 2m) waits for a node that is starting`,
          );
        }
        throw new NotListeningError(`${what}: ${errorText(e)}; waiting for the node to listen (${waited} of ${waitMs} ms)`);
      }
      throw new TransientError(`${what}: ${errorText(e)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const isAnswer = (a: unknown) => typeof a === 'object' && a !== null && !Array.isArray(a) && ('result' in a || 'error' in a);
    if (!(Array.isArray(body) ? Array.isArray(json) ? json.every(isAnswer) : isAnswer(json) : isAnswer(json))) {
      if (res.status >= 500) throw new TransientError(`${what}: HTTP ${res.status}`);
      const type = res.headers.get('content-type')?.split(';')[0] ?? 'no content type';
      throw new FatalError(
        `RPC ${where}: ${what}: the answer is not JSON-RPC (HTTP ${res.status}, ${type}, ${text.length} bytes: ${JSON.stringify(text.slice(0, 60))}); is this a node's RPC endpoint?`,
      );
    }
    return { status: res.status, json };
  }

  /** Runs `attempt` until it succeeds, retrying TransientErrors with capped exponential back-off (each retry logged). */
  async function withRetry<T>(attempt: () => Promise<T>): Promise<T> {
    const started = Date.now();
    let delay = retryInitialMs;
    let tries = 0;
    for (;;) {
      try {
        return await attempt();
      } catch (e) {
        if (!(e instanceof TransientError)) throw e;
        if (e instanceof NotListeningError) {
          const wait = Math.min(delay, WAIT_POLL_MAX_MS);
          log(`RPC ${where}: ${e.message}, next in ${wait} ms`);
          await sleep(wait);
          delay = Math.min(delay * 2, retryMaxMs);
          continue;
        }
        tries++;
        const elapsed = Date.now() - started;
        if (tries >= maxAttempts) {
          throw new Error(`RPC ${where}: giving up after ${tries} attempt${tries === 1 ? '' : 's'} over ${elapsed} ms: ${e.message}`, { cause: e });
        }
        log(`RPC ${where}: ${e.message}; attempt ${tries}/${maxAttempts}, next in ${delay} ms`);
        if (retryWarnings < MAX_RETRY_WARNINGS) warnings.push(`RPC ${where}: ${e.message}; retrying in ${delay} ms`);
        else if (retryWarnings === MAX_RETRY_WARNINGS) warnings.push(`RPC ${where}: more transient failures (not listed)`);
        retryWarnings++;
        await sleep(delay);
        delay = Math.min(delay * 2, retryMaxMs);
      }
    }
  }

  function checkAnswer(a: RpcAnswer | undefined, method: string, status: number): unknown {
    if (!a || typeof a !== 'object') throw new TransientError(`${method}: malformed answer`);
    if (a.error !== null && a.error !== undefined) {
      const e: unknown = a.error;
      if (typeof e !== 'object' || e === null || typeof (e as { code?: unknown }).code !== 'number' || typeof (e as { message?: unknown }).message !== 'string') {
        throw new FatalError(`RPC ${where}: ${method}: HTTP ${status}, the error is not a JSON-RPC error (code and message): ${JSON.stringify(e).slice(0, 80)}`);
      }
      if (a.error.code === -28) throw new TransientError(`${method}: node not ready (${a.error.message}, code -28)`);
      throw new RpcError(a.error.code, a.error.message, method, where);
    }
    if (status >= 500) throw new TransientError(`${method}: HTTP ${status}`);
    if (status < 200 || status >= 300) throw new FatalError(`RPC ${where}: ${method}: HTTP ${status} with a result and no error: not a JSON-RPC success`);
    return a.result;
  }

  async function call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return withRetry(async () => {
      const { status, json } = await post({ jsonrpc: '1.0', id: nextId++, method, params }, method);
      return checkAnswer(json as RpcAnswer, method, status) as T;
    });
  }

  /** One batch; per-item answers in request order (RpcError objects for failed items). */
  async function batch(method: string, paramsList: unknown[][]): Promise<(unknown | RpcError)[]> {
    if (paramsList.length === 0) return [];
    return withRetry(async () => {
      const first = nextId;
      nextId += paramsList.length;
      const body = paramsList.map((params, k) => ({ jsonrpc: '1.0', id: first + k, method, params }));
      const { status, json } = await post(body, `${method} batch`);
      if (!Array.isArray(json)) {
        checkAnswer(json as RpcAnswer, method, status); // throws for an error object
        throw new TransientError(`${method} batch: answer is not an array`);
      }
      const byId = new Map<unknown, RpcAnswer>();
      for (const a of json as RpcAnswer[]) if (a && typeof a === 'object') byId.set(a.id, a);
      return paramsList.map((_, k) => {
        try {
          return checkAnswer(byId.get(first + k), method, 200);
        } catch (e) {
          if (e instanceof RpcError) return e;
          throw e; // transient: retry the whole batch
        }
      });
    });
  }

  return { where, warnings, call, batch };
}

/** The items of a batch answer, throwing the first error answer. */
export const strict = (results: (unknown | RpcError)[]): unknown[] =>
  results.map((r) => {
    if (r instanceof RpcError) throw r;
    return r;
  });
