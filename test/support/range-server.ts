// A static file server for pack tests: the files of one directory, one byte range per request
// answered 206 as src/serve/range.ts decides (what a CDN or object store does for a pack reader).
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { decideRange } from '../../src/serve/range.js';

/**
 * A static server of `dir` that answers one byte range with 206 (src/serve/range.ts decides);
 * `requests()` counts the requests so far, `requests(name)` those for one file.
 */
export async function rangeServer(dir: string): Promise<{ url: string; server: Server; requests: (name?: string) => number }> {
  let requests = 0;
  const byName = new Map<string, number>();
  const server = createServer((req, res) => {
    requests++;
    const name = decodeURIComponent(new URL(req.url!, 'http://x').pathname.slice(1));
    byName.set(name, (byName.get(name) ?? 0) + 1);
    let size: number;
    try {
      if (name.includes('/')) throw new Error('no subdirectories');
      size = statSync(join(dir, name)).size;
    } catch {
      res.writeHead(404).end();
      return;
    }
    const d = decideRange(req.headers.range, size);
    if (d.kind === 'unsatisfiable') {
      res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
      return;
    }
    if (d.kind === 'whole') {
      res.writeHead(200, { 'Content-Length': size });
      createReadStream(join(dir, name)).pipe(res);
      return;
    }
    res.writeHead(206, { 'Content-Range': `bytes ${d.start}-${d.end}/${size}`, 'Content-Length': d.end - d.start + 1 });
    createReadStream(join(dir, name), { start: d.start, end: d.end }).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server, requests: (name?: string) => (name === undefined ? requests : (byName.get(name) ?? 0)) };
}

