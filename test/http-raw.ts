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
