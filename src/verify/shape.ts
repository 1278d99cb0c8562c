/**
 * Document shapes: every JSON document of the tree is validated against the published JSON
 * Schema of its kind (docs/schemas, the files the build writes into the site), so verify and
 * the contract cannot drift apart. The schemas are compiled once per process, on first use.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { STATS_PATH } from '../contract/layout.js';
import { SCHEMAS_DIR, contractFiles } from '../publish/openapi.js';
import { splitFirst } from './files.js';

const SCHEMA_REFS = [
  'tx.schema.json',
  'block.schema.json',
  'block-height.schema.json',
  'address.schema.json',
  'address-capped.schema.json',
  'name.schema.json',
  'names.schema.json',
  'stats.schema.json',
  'error.schema.json',
  'site-info.schema.json#/$defs/internal',
  'site-info.schema.json#/$defs/public',
] as const;

/** A schema of docs/schemas, or a definition in one (`<file>#/$defs/<name>`). */
export type SchemaRef = (typeof SCHEMA_REFS)[number];

let compiled: Map<SchemaRef, ValidateFunction> | undefined;

/**
 * Compiles the schemas (once per process). Loaded here, not at import, so that other commands
 * do not pay for ajv. The schemas themselves are not validated against the JSON Schema
 * meta-schema (a large compile): the contract test does that, in strict mode.
 */
export async function loadShapeChecks(): Promise<void> {
  if (compiled) return;
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  const ajv = new Ajv2020({ strict: true, validateSchema: false });
  for (const [path, text] of contractFiles()) {
    if (path.startsWith(`${SCHEMAS_DIR}/`)) ajv.addSchema(JSON.parse(text) as object, path.slice(SCHEMAS_DIR.length + 1));
  }
  const all = new Map<SchemaRef, ValidateFunction>();
  for (const ref of SCHEMA_REFS) {
    const v = ajv.getSchema(ref);
    if (!v) throw new Error(`internal: no schema ${ref} in ${SCHEMAS_DIR}/`);
    all.set(ref, v);
  }
  compiled = all;
}

function validator(ref: SchemaRef): ValidateFunction {
  const v = compiled?.get(ref);
  if (!v) throw new Error('internal: loadShapeChecks() was not awaited');
  return v;
}

/**
 * The schema a tree path's document must satisfy; undefined for files the contract does not
 * describe (the contract files themselves) and for `_site.json`, checked with the chain.
 */
export function schemaOf(rel: string, doc: unknown): SchemaRef | undefined {
  const [top] = splitFirst(rel);
  switch (top) {
    case 'tx':
      return 'tx.schema.json';
    case 'block':
      return 'block.schema.json';
    case 'block-height':
      return 'block-height.schema.json';
    case 'address':
      // A capped address is the error document; which addresses are capped is checked apart.
      return doc !== null && typeof doc === 'object' && 'error' in doc ? 'address-capped.schema.json' : 'address.schema.json';
    case 'name':
    case 'v':
      return 'name.schema.json';
    case 'errors':
      return 'error.schema.json';
  }
  if (rel === STATS_PATH) return 'stats.schema.json';
  if (rel === 'names.json') return 'names.schema.json';
  if (rel === 'assets/site.json') return 'site-info.schema.json#/$defs/public';
  return undefined;
}

/** RFC 6901: `~` and `/` in a key. */
const pointerKey = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

/** One ajv error as "<JSON pointer>: <what is wrong>", the pointer naming the field itself. */
function describe(e: ErrorObject): { at: string; text: string } {
  if (e.keyword === 'additionalProperties') {
    return { at: `${e.instancePath}/${pointerKey(String(e.params.additionalProperty))}`, text: 'is an unknown field' };
  }
  if (e.keyword === 'required') return { at: `${e.instancePath}/${pointerKey(String(e.params.missingProperty))}`, text: 'is missing' };
  return { at: e.instancePath, text: e.message ?? e.keyword };
}

/**
 * Why `doc` does not have the shape of `ref`, or undefined when it does: the deepest of ajv's
 * errors (of a oneOf/anyOf, the alternatives' errors come with it, and the deepest is the
 * closest match), as "<pointer>: <problem> (<schema>)".
 */
export function shapeProblem(ref: SchemaRef, doc: unknown): string | undefined {
  const v = validator(ref);
  if (v(doc)) return undefined;
  let best: { at: string; text: string } | undefined;
  for (const e of v.errors ?? []) {
    const d = describe(e);
    if (!best || d.at.split('/').length > best.at.split('/').length) best = d;
  }
  return `${best?.at || '(root)'}: ${best?.text ?? 'does not match'} (${ref})`;
}
