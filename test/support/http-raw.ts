/** A raw HTTP/1.1 client (one request per connection): sends the target bytes exactly as given. */
import http from 'node:http';
import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export function rawRequest(base: string, target: string, method = 'GET', extraHeaders = ''): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    sock.setTimeout(10_000, () => sock.destroy(new Error(`timeout on ${target}`)));
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      try {
        resolve(parse(Buffer.concat(chunks), method === 'HEAD'));
      } catch (e) {
        reject(new Error(`${target}: ${(e as Error).message}`));
      }
    });
    sock.write(Buffer.concat([Buffer.from(`${method} `), Buffer.from(target, 'latin1'), Buffer.from(` HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n${extraHeaders}\r\n`)]));
  });
}

/**
 * Sends `bytes` as they are on a fresh connection and parses the one answer (read until the
 * server closes). `halfClose`: end the socket's writing side right after the bytes (a client that
 * half-closes after its request); otherwise a request should carry `Connection: close`.
 */
export function rawExchange(base: string, bytes: string | Buffer, opts: { halfClose?: boolean; head?: boolean; timeoutMs?: number } = {}): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    sock.setTimeout(opts.timeoutMs ?? 10_000, () => sock.destroy(new Error('timeout: no complete answer')));
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      try {
        resolve(parse(Buffer.concat(chunks), opts.head === true));
      } catch (e) {
        reject(new Error(`${(e as Error).message} (got ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))})`));
      }
    });
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
    if (opts.halfClose) sock.end(data);
    else sock.write(data);
  });
}

function parse(buf: Buffer, head: boolean): RawResponse {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('no header end');
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    const k = l.slice(0, i).trim().toLowerCase();
    headers[k] = headers[k] === undefined ? l.slice(i + 1).trim() : `${headers[k]}, ${l.slice(i + 1).trim()}`;
  }
  let body = buf.subarray(end + 4);
  if (head) body = Buffer.alloc(0);
  else if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    let pos = 0;
    for (;;) {
      const nl = body.indexOf('\r\n', pos);
      const n = parseInt(body.subarray(pos, nl).toString(), 16);
      if (!n) break;
      parts.push(body.subarray(nl + 2, nl + 2 + n));
      pos = nl + 2 + n + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status, headers, body };
}

/**
 * A request over a kept-alive connection (node:http) for targets that are already valid URL paths
 * (e.g. WHATWG-parsed ones): for servers that keep the socket open after `Connection: close`,
 * where `rawRequest` would wait for their idle timeout. Repeated headers are joined with ", ".
 */
export function keepAliveRequest(agent: http.Agent, base: string, target: string, method = 'GET', headers: Record<string, string> = {}): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.get({ agent, host: u.hostname, port: u.port, path: target, method, headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headersDistinct)) if (v) headers[k] = v.join(', ');
        resolve({ status: res.statusCode!, headers, body: Buffer.concat(chunks) });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`timeout on ${target}`)));
    req.on('error', reject);
  });
}

export interface ParsedResponse extends RawResponse {
  /** The status line and header lines as received. */
  head: string;
}

/**
 * One complete response at the start of `buf` (interim 1xx responses are skipped): the response
 * and the bytes it used, or undefined when more bytes are needed. `bodiless`: the request was HEAD.
 * `closed`: the connection has ended, so a response without a length ends here.
 */
export function takeResponse(buf: Buffer, bodiless: boolean, closed = false): { res: ParsedResponse; used: number } | undefined {
  let from = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', from);
    if (end < 0) {
      if (closed && buf.length > from) throw new Error(`incomplete response head: ${JSON.stringify(buf.subarray(from, from + 200).toString('latin1'))}`);
      return undefined;
    }
    const head = buf.subarray(from, end).toString('latin1');
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3}) /.exec(lines[0]! + ' ');
    if (!m) throw new Error(`not a status line: ${JSON.stringify(lines[0])}`);
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      if (i <= 0) throw new Error(`bad header line ${JSON.stringify(l)}`);
      const k = l.slice(0, i).trim().toLowerCase();
      headers[k] = headers[k] === undefined ? l.slice(i + 1).trim() : `${headers[k]}, ${l.slice(i + 1).trim()}`;
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      from = bodyStart;
      continue;
    }
    const done = (body: Buffer, used: number) => ({ res: { status, headers, body, head }, used });
    if (bodiless || status === 204 || status === 304) return done(Buffer.alloc(0), bodyStart);
    if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      let pos = bodyStart;
      for (;;) {
        const nl = buf.indexOf('\r\n', pos);
        if (nl < 0) return undefined;
        const n = parseInt(buf.subarray(pos, nl).toString('latin1'), 16);
        if (!(n >= 0)) throw new Error('bad chunk size');
        if (buf.length < nl + 2 + n + 2) return undefined;
        if (n === 0) return done(Buffer.concat(parts), nl + 4);
        parts.push(buf.subarray(nl + 2, nl + 2 + n));
        pos = nl + 2 + n + 2;
      }
    }
    if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`bad Content-Length ${headers['content-length']}`);
      if (buf.length < bodyStart + n) {
        if (closed) throw new Error(`body cut short: ${buf.length - bodyStart} of ${n} bytes`);
        return undefined;
      }
      return done(buf.subarray(bodyStart, bodyStart + n), bodyStart + n);
    }
    return closed ? done(buf.subarray(bodyStart), buf.length) : undefined;
  }
}

/**
 * A kept-alive raw connection: one request at a time, written exactly as given, its response
 * parsed with {@link takeResponse}. `closed` once the server (or a timeout) ended it.
 */
export class RawConnection {
  private readonly sock: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  closed = false;
  error: Error | undefined;
  /** Requests sent on this connection. */
  sent = 0;

  constructor(base: string) {
    const u = new URL(base);
    this.sock = net.connect(Number(u.port), u.hostname);
    this.sock.on('data', (c: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, c]) : c;
      this.waiter?.();
    });
    this.sock.on('error', (e) => (this.error = e));
    this.sock.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
  }

  /** Sends `bytes` and resolves with the next response (rejects when none arrives in `timeoutMs`). */
  request(bytes: Buffer, bodiless: boolean, timeoutMs = 10_000): Promise<ParsedResponse> {
    this.sent++;
    this.sock.write(bytes);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`no complete response in ${timeoutMs} ms (got ${JSON.stringify(this.buf.subarray(0, 300).toString('latin1'))})`)), timeoutMs);
      const finish = (err?: Error, res?: ParsedResponse) => {
        clearTimeout(timer);
        this.waiter = undefined;
        if (err) reject(err);
        else resolve(res!);
      };
      const check = () => {
        try {
          const got = takeResponse(this.buf, bodiless, this.closed);
          if (got) {
            this.buf = this.buf.subarray(got.used);
            return finish(undefined, got.res);
          }
          if (this.closed) finish(new Error(`connection closed before a response${this.error ? ` (${this.error.message})` : ''}`));
        } catch (e) {
          finish(e as Error);
        }
      };
      this.waiter = check;
      check();
    });
  }

  /** Bytes received that no request has taken. */
  get leftover(): Buffer {
    return this.buf;
  }

  destroy(): void {
    this.sock.destroy();
  }
}
