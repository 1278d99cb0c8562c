/**
 * nginx: a generated config (http-level maps + a server block). nginx answers the canonical
 * URLs statically (lower-case hashes, canonical name paths, every name query form via
 * `map $args` → variant key → try_files); everything else (percent-encoded or natural names,
 * upper-case hashes, misses that need the id in the error text, capped addresses, hostile
 * paths) goes to `@router`:
 *   - with `upstream` (recommended; `snapshot build --nginx-upstream host:port`): proxied to
 *     `snapshot serve`, so the answers are the router's, byte for byte;
 *   - without: generic per-kind JSON 404 documents (errors/<kind>.json), as on any static host.
 * nginx normalizes `$uri` (decodes %XX, resolves `..`, merges `//`) before matching, so only raw
 * request targets made of `[A-Za-z0-9._~/?&=-]`, without `//` or dot-leading segments, are
 * answered statically; the test is on the raw `$request_uri`.
 */
import { CACHE_LONG, CACHE_SHORT } from '../contract/router.js';
import { BAD_REQUEST_PATH, BLOCK_HEIGHT_DIR, ERRORS_DIR, NAMES_PATH, STATS_PATH, URI_TOO_LONG_PATH, addressPath, errorDocPath, type ErrorKind, type SiteInfo } from '../contract/layout.js';

export interface NginxOptions {
  /** Absolute path of the snapshot tree. */
  root: string;
  /** `listen` value (default 8080). */
  listen?: string;
  /** `host:port` of a `snapshot serve` for what nginx cannot answer statically. */
  upstream?: string;
  info: SiteInfo;
}

/** A `host:port` for `proxy_pass` (host name, IPv4 or [IPv6]; port 1–65535), else a clear error naming the option. */
export function nginxUpstream(option: string, value: unknown): string {
  const text = String(value);
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):([0-9]{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : 0;
  if (!m || port < 1 || port > 65535) {
    throw new Error(`--${option} ${JSON.stringify(text)} is not host:port with a port 1–65535 (e.g. --${option} 127.0.0.1:8080, the address of snapshot serve)`);
  }
  return text;
}

export function nginxConfig(opts: NginxOptions): string {
  const capped = opts.info.cappedAddresses.map((a) => `  /${addressPath(a)} 1;\n`).join('');
  // A miss: to the router when there is one, else the generic error document of its kind.
  const KIND_DOC = `/${ERRORS_DIR}/$snap_kind.json`;
  const miss = (doc: string) => (opts.upstream ? '= @router' : doc);
  const errDoc = (kind: ErrorKind) => `/${errorDocPath(kind)}`;
  const flag = (name: string, token: string) =>
    `map $args $snap_q_${name} { "~(^|&)${name === 'hist' ? 'history' : `with_${name}`}(=[^&]*)?(&|$)" "${token}"; default ""; }\n`;
  const hdr = (cache: string) =>
    `    add_header Access-Control-Allow-Origin "*" always;\n    add_header Cache-Control "${cache}" always;\n`;
  // In each static location (not at server level: error_page redirects would hit it again).
  // error_page in a location replaces the inherited ones, so each location repeats the 418 rule.
  const toRouter = `    error_page 418 ${opts.upstream ? '=' : '=404'} @router;\n`;
  const guard = `${toRouter}    if ($snap_to_router) { return 418; }\n`;
  const router = opts.upstream
    ? `  location @router {\n    proxy_pass http://${opts.upstream}$request_uri;\n    proxy_set_header Host $host;\n    proxy_http_version 1.1;\n    proxy_set_header Connection "";\n  }\n`
    : `  location @router {\n    default_type application/json;\n${hdr(CACHE_SHORT)}    rewrite ^ ${KIND_DOC} break;\n  }\n`;
  return `# chain snapshot: nginx config for the tree at ${opts.root}
# Include in the http {} context (e.g. /etc/nginx/conf.d/snapshot.conf). Regenerate or edit
# 'root' if the tree moves. ${opts.upstream ? `Non-canonical requests go to snapshot serve at ${opts.upstream}.` : 'Static only: set an upstream (snapshot serve) for exact error texts, natural name URLs and upper-case hashes.'}

# Long keys below (addresses): remove if your http {} already sets a larger value.
map_hash_bucket_size 256;

${flag('hist', 'history-')}map $args $snap_q_all { "~(^|&)with_all(=[^&]*)?(&|$)" "1"; default "0"; }
${flag('block', 'block-')}${flag('height', 'height-')}${flag('mrkl_branch', 'mrkl_branch-')}${flag('rawtx', 'rawtx-')}${flag('tx_idx', 'tx_idx-')}map "$snap_q_all$snap_q_block$snap_q_height$snap_q_mrkl_branch$snap_q_rawtx$snap_q_tx_idx" $snap_flags {
  "~^1" "block-height-mrkl_branch-rawtx-tx_idx-";
  "~^0(?<f>.*)$" $f;
}
map "$snap_q_hist$snap_flags" $snap_vkey { "~^(?<k>.+)-$" $k; default ""; }
map $snap_vkey $snap_vprefix { "" ""; default "/v/$snap_vkey"; }
# Raw targets nginx may answer itself (no %-escapes, no normalization differences).
map $request_uri $snap_plain {
  "~^[A-Za-z0-9._~/?&=-]*$" 1;
  default 0;
}
map $request_uri $snap_odd {
  "~(//|/\\.)" 1;
  default 0;
}
map "$snap_plain$snap_odd" $snap_to_router { "10" 0; default 1; }
map $uri $snap_capped {
${capped}  default 0;
}
map $uri $snap_kind {
  "~^/tx/" tx;
  "~^/block/" block;
  "~^/address/" address;
  "~^/name/" name;
  default default;
}

server {
  listen ${opts.listen ?? '8080'};
  root ${opts.root};
  charset utf-8;
  charset_types application/json text/plain text/html text/css text/javascript;
  types {
    application/json json;
    application/octet-stream bin;
    text/plain hex;
    text/html html;
    text/css css;
    text/javascript js;
  }
  default_type application/octet-stream;
  server_tokens off;
  etag on;
  # Text documents compressed for clients that accept it (.bin: raw bytes, barely compressible).
  # Proxied answers come from snapshot serve already compressed.
  gzip on;
  gzip_types application/json text/plain text/css text/javascript;
  gzip_min_length 1024;
  gzip_vary on;

  error_page 418 ${opts.upstream ? '=' : '=404'} @router;
  error_page 400 /${BAD_REQUEST_PATH};
  error_page 414 /${URI_TOO_LONG_PATH};
  error_page 404 ${miss(errDoc('default'))};

  location ~ "^/(tx|block)/[0-9a-f]{64}\\.(bin|hex)$" {
${hdr(CACHE_LONG)}${guard}    try_files $uri =404;
    error_page 404 ${miss(KIND_DOC)};
  }
  location ~ "^/(tx|block)/[0-9a-f]{64}\\.json$" {
${hdr(CACHE_SHORT)}${guard}    try_files $uri =404;
    error_page 404 ${miss(KIND_DOC)};
  }
  location ~ "^/${BLOCK_HEIGHT_DIR}/(0|[1-9][0-9]{0,9})\\.json$" {
${hdr(CACHE_SHORT)}${guard}    try_files $uri =404;
    error_page 404 ${miss(errDoc('default'))};
  }
  location ~ "^/address/[A-Za-z0-9]+\\.json$" {
${hdr(CACHE_SHORT)}${guard}    if ($snap_capped) { return 418; }
    try_files $uri =404;
    error_page 404 ${miss(errDoc('address'))};
  }
  location ^~ /name/ {
${hdr(CACHE_SHORT)}${guard}    try_files $snap_vprefix$uri =404;
    error_page 404 ${miss(errDoc('name'))};
  }
  location = /${STATS_PATH} {
${hdr(CACHE_SHORT)}${guard}    try_files $uri =404;
    error_page 404 ${miss(errDoc('default'))};
  }
  location = /${NAMES_PATH} {
${hdr(CACHE_SHORT)}${guard}    try_files $uri =404;
    error_page 404 ${miss(errDoc('default'))};
  }
  location ^~ /${ERRORS_DIR}/ {
    internal;
    default_type application/json;
${hdr(CACHE_SHORT)}  }
  # The browsing UI (index.html and its assets).
  location = / {
${hdr(CACHE_SHORT)}${guard}    try_files /index.html =404;
    error_page 404 ${miss(errDoc('default'))};
  }
  location ^~ /assets/ {
${hdr(CACHE_SHORT)}${guard}    try_files $uri =404;
    error_page 404 ${miss(errDoc('default'))};
  }
  # The API contract (OpenAPI description and JSON Schemas).
  location = /openapi.json {
${hdr(CACHE_SHORT)}${guard}    try_files $uri =404;
    error_page 404 ${miss(errDoc('default'))};
  }
  location ^~ /schemas/ {
${hdr(CACHE_SHORT)}${guard}    try_files $uri =404;
    error_page 404 ${miss(errDoc('default'))};
  }
  location / {
    return 418;
  }
${router}}
`;
}
