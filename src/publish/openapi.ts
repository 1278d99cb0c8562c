/**
 * The machine-readable API contract written into every built site: the OpenAPI description
 * (`/openapi.json`) and the JSON Schemas it references (`/schemas/<kind>.schema.json`). The
 * files are the repository's `docs/openapi.json` and `docs/schemas/`, read at run time relative
 * to this module, so the same code works from `src/` (tsx, vitest) and from `dist/` (the
 * package ships `docs/`).
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Where the contract lives in a site, relative to its root. */
export const OPENAPI_PATH = 'openapi.json';
export const SCHEMAS_DIR = 'schemas';

const DOCS = new URL('../../docs/', import.meta.url);

/** Site path → content of the contract files, schemas in name order (deterministic). */
export function contractFiles(): Map<string, string> {
  const files = new Map<string, string>([[OPENAPI_PATH, readFileSync(new URL('openapi.json', DOCS), 'utf8')]]);
  const dir = new URL(`${SCHEMAS_DIR}/`, DOCS);
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.schema.json')).sort()) {
    files.set(`${SCHEMAS_DIR}/${name}`, readFileSync(new URL(name, dir), 'utf8'));
  }
  return files;
}
