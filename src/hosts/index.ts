/**
 * Host files written at the end of a build: Netlify, Cloudflare Pages and nginx glue around
 * the shared router, plus the generic error documents and 404.html every host falls back to.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { BAD_REQUEST_PATH, ERROR_KINDS, GENERIC_ERROR_MESSAGES, NOT_FOUND_HTML_PATH, URI_TOO_LONG_PATH, errorBody, errorDocPath, type SiteInfo } from '../contract/layout.js';
import { BAD_REQUEST, URI_TOO_LONG } from '../contract/router.js';
import { CLOUDFLARE_ENTRY, cloudflareFiles } from './cloudflare.js';
import { NETLIFY_ENTRY, netlifyFiles } from './netlify.js';
import { nginxConfig } from './nginx.js';
import { shippedModules } from './ship.js';

export type HostName = 'netlify' | 'cloudflare' | 'nginx';
export const HOSTS: readonly HostName[] = ['netlify', 'cloudflare', 'nginx'];

export interface HostFileOptions {
  /** Hosts to write for (default: all). */
  hosts?: readonly HostName[];
  /** `snapshot serve` address for nginx's fallback (host:port); default: static-only nginx. */
  nginxUpstream?: string;
  nginxListen?: string;
}

/** Files (path relative to the tree → contents) for the hosts. */
export async function hostFiles(outDir: string, info: SiteInfo, opts: HostFileOptions = {}): Promise<Map<string, string>> {
  const hosts = opts.hosts ?? HOSTS;
  const files = new Map<string, string>();
  for (const kind of ERROR_KINDS) files.set(errorDocPath(kind), errorBody(GENERIC_ERROR_MESSAGES[kind]));
  files.set(BAD_REQUEST_PATH, BAD_REQUEST.body);
  files.set(URI_TOO_LONG_PATH, URI_TOO_LONG.body);
  files.set(NOT_FOUND_HTML_PATH, errorBody(GENERIC_ERROR_MESSAGES.default));
  if (hosts.includes('netlify')) for (const [p, c] of netlifyFiles(await shippedModules(NETLIFY_ENTRY), info)) files.set(p, c);
  if (hosts.includes('cloudflare')) for (const [p, c] of cloudflareFiles(await shippedModules(CLOUDFLARE_ENTRY), info)) files.set(p, c);
  if (hosts.includes('nginx')) {
    files.set('nginx.conf', nginxConfig({ root: resolve(outDir), info, upstream: opts.nginxUpstream, listen: opts.nginxListen }));
  }
  return files;
}

/** Writes the host files into the tree (only files whose bytes change); returns their paths. */
export async function writeHostFiles(outDir: string, info: SiteInfo, opts: HostFileOptions = {}): Promise<string[]> {
  return writeChangedFiles(outDir, await hostFiles(outDir, info, opts));
}

/** Writes `files` (path relative to `outDir` → contents) whose bytes change; returns their paths. */
export async function writeChangedFiles(outDir: string, files: Map<string, string>): Promise<string[]> {
  for (const [rel, content] of files) {
    const abs = join(outDir, rel);
    const old = await readFile(abs, 'utf8').catch(() => undefined);
    if (old === content) continue;
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, content);
  }
  return [...files.keys()];
}
