/**
 * The machine-readable API contract (docs/openapi.json, docs/schemas/*.schema.json) against what
 * the build really writes: every JSON document of the demo build (compact, and pretty with a
 * small address cap so capped documents exist) and of the Bitcoin 0–599 build is validated with
 * ajv (draft 2020-12, strict mode) against the schema its path maps to; name variants are also
 * checked for exactly the fields their query asks for. The OpenAPI file is checked with an
 * OpenAPI 3.1 validator and its schema references must resolve. Deliberately broken documents
 * must fail. The contract files must be in every built tree, served as JSON, and accepted by
 * `snapshot verify`. The schemas and the TypeScript document types (src/contract/documents.ts)
 * describe the same objects: each schema object's properties and required list are the keys
 * of its type (read from the key tables the compiler keeps equal to the types).
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { DOCUMENT_KEYS, type KeyTable, type TxOut } from '../src/contract/documents.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { buildSnapshot } from '../src/site/build.js';
import { contractFiles } from '../src/publish/openapi.js';
import { demoSource } from '../src/source/demo.js';
import { MANIFEST_PATH, SITE_INFO_PATH, WITH_FLAGS, variantFromKey, type SiteInfo } from '../src/contract/layout.js';
import { makeRouterSite, route } from '../src/contract/router.js';
import { verifySnapshot } from '../src/verify/index.js';
import { memorySource } from '../src/source/memory.js';
import { chainPath, framedBlocks, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const DOCS = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'docs');
const SCHEMA_FILES = readdirSync(join(DOCS, 'schemas')).filter((f) => f.endsWith('.schema.json')).sort();
const readDoc = (rel: string) => readFileSync(join(DOCS, rel), 'utf8');

/** All schemas, each under its file name, so their relative `$ref`s resolve as on the site. */
function contractAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  for (const f of SCHEMA_FILES) ajv.addSchema(JSON.parse(readDoc(`schemas/${f}`)) as object, f);
  return ajv;
}

const ajv = contractAjv();
const validators = new Map<string, ValidateFunction>();
function validator(ref: string): ValidateFunction {
  let v = validators.get(ref);
  if (!v) {
    v = ajv.getSchema(ref);
    if (!v) throw new Error(`schema ${ref} not found`);
    validators.set(ref, v);
  }
  return v;
}

/**
 * An OpenAPI validator that knows the schema files, under the URI openapi.json uses
 * (`schemas/<f>`) and the one they use for each other (`<f>`): its resolver takes references literally.
 */
async function openApiValidator(): Promise<Validator> {
  const v = new Validator();
  for (const f of SCHEMA_FILES) {
    for (const uri of [`schemas/${f}`, f]) await v.addSpecRef(readDoc(`schemas/${f}`), uri);
  }
  return v;
}

type Kind = { schema: string } | { special: 'openapi' | 'schema' | 'manifest' };

/** Which schema a tree path's document must satisfy (undefined: a JSON file the contract lacks). */
function kindOf(rel: string, info: SiteInfo): Kind | undefined {
  let m: RegExpExecArray | null;
  if (/^tx\/[0-9a-f]{64}\.json$/.test(rel)) return { schema: 'tx.schema.json' };
  if (/^block\/[0-9a-f]{64}\.json$/.test(rel)) return { schema: 'block.schema.json' };
  if (/^block-height\/(0|[1-9][0-9]*)\.json$/.test(rel)) return { schema: 'block-height.schema.json' };
  if ((m = /^address\/([A-Za-z0-9]+)\.json$/.exec(rel))) {
    return { schema: info.cappedAddresses.includes(m[1]!) ? 'address-capped.schema.json' : 'address.schema.json' };
  }
  if (/^(name|v\/[a-z_-]+\/name)\/.+\.json$/.test(rel)) return { schema: 'name.schema.json' };
  if (rel === 'stats.json') return { schema: 'stats.schema.json' };
  if (rel === 'names.json') return { schema: 'names.schema.json' };
  if (/^errors\/[a-z-]+\.json$/.test(rel)) return { schema: 'error.schema.json' };
  if (rel === SITE_INFO_PATH) return { schema: 'site-info.schema.json#/$defs/internal' };
  if (rel === 'assets/site.json') return { schema: 'site-info.schema.json#/$defs/public' };
  if (rel === 'openapi.json') return { special: 'openapi' };
  if (/^schemas\/[a-z-]+\.schema\.json$/.test(rel)) return { special: 'schema' };
  if (rel === MANIFEST_PATH) return { special: 'manifest' }; // text lines, not JSON
  return undefined;
}

/** Fields a name variant's records carry: the five base fields plus one per with_ flag. */
function expectedNameShape(rel: string): { history: boolean; fields: string[] } {
  const key = rel.startsWith('v/') ? rel.split('/')[1]! : '';
  const v = variantFromKey(key);
  if (!v) throw new Error(`${rel}: unknown variant key ${key}`);
  const fields = ['name', 'value', 'txid', 'address', 'expires_in', ...WITH_FLAGS.filter((f) => v.with.has(f))];
  return { history: v.history, fields: fields.sort() };
}

interface TreeCheck {
  counts: Record<string, number>;
  failures: string[];
}

/** Validates every JSON document listed in the tree's manifest. */
function checkTree(out: string): TreeCheck {
  const info = JSON.parse(readFileSync(join(out, SITE_INFO_PATH), 'utf8')) as SiteInfo;
  const paths = readFileSync(join(out, MANIFEST_PATH), 'utf8').trim().split('\n').map((l) => l.split(' ')[2]!);
  const counts: Record<string, number> = {};
  const failures: string[] = [];
  for (const rel of [...paths, MANIFEST_PATH]) {
    if (!rel.endsWith('.json')) continue;
    const kind = kindOf(rel, info);
    if (!kind) {
      failures.push(`${rel}: no schema in the contract for this path`);
      continue;
    }
    if ('special' in kind) {
      counts[kind.special] = (counts[kind.special] ?? 0) + 1;
      continue;
    }
    const doc: unknown = JSON.parse(readFileSync(join(out, rel), 'utf8'));
    const v = validator(kind.schema);
    if (!v(doc)) {
      failures.push(`${rel}: ${ajv.errorsText(v.errors)}`);
      continue;
    }
    if (kind.schema === 'name.schema.json') {
      const want = expectedNameShape(rel);
      if (Array.isArray(doc) !== want.history) failures.push(`${rel}: history ${want.history} but ${Array.isArray(doc) ? 'an array' : 'an object'}`);
      for (const rec of Array.isArray(doc) ? doc : [doc]) {
        const got = Object.keys(rec as object).sort();
        if (got.join() !== want.fields.join()) failures.push(`${rel}: fields ${got.join()} instead of ${want.fields.join()}`);
      }
    }
    counts[kind.schema] = (counts[kind.schema] ?? 0) + 1;
  }
  return { counts, failures };
}

type SchemaObject = { properties?: Record<string, unknown>; required?: string[]; additionalProperties?: unknown; [k: string]: unknown };

/** The schema object at `<file>#<pointer>` of a set of parsed schema files. */
function schemaAt(files: Record<string, unknown>, ref: string): SchemaObject {
  const [file, pointer = ''] = ref.split('#') as [string, string?];
  let at: unknown = files[file];
  for (const part of pointer.split('/').slice(1)) at = (at as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (!at || typeof at !== 'object') throw new Error(`${ref}: no such schema object`);
  return at as SchemaObject;
}

/**
 * Where the schemas and the document types disagree: for each type's key table, the schema
 * object's property names and required list against the table's keys and required keys; and
 * every closed schema object (additionalProperties false) must have a type.
 */
function typeMismatches(files: Record<string, unknown>, tables: Record<string, Readonly<Record<string, string>>>): string[] {
  const out: string[] = [];
  const sorted = (a: Iterable<string>) => [...a].sort().join(', ');
  for (const [ref, table] of Object.entries(tables)) {
    const s = schemaAt(files, ref);
    const props = sorted(Object.keys(s.properties ?? {}));
    const keys = sorted(Object.keys(table));
    if (props !== keys) out.push(`${ref}: schema properties [${props}], type keys [${keys}]`);
    const required = sorted(s.required ?? []);
    const want = sorted(Object.keys(table).filter((k) => table[k] === 'required'));
    if (required !== want) out.push(`${ref}: schema requires [${required}], the type [${want}]`);
  }
  const walk = (v: unknown, ref: string): void => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${ref}/${i}`));
    const o = v as SchemaObject;
    if (o.additionalProperties === false && o.properties) {
      const key = ref.endsWith('#') ? ref.slice(0, -1) : ref;
      if (!(key in tables)) out.push(`${key}: a closed schema object without a document type`);
    }
    for (const [k, x] of Object.entries(o)) walk(x, `${ref}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  for (const [file, schema] of Object.entries(files)) walk(schema, `${file}#`);
  return out;
}

const tip = (dir: string) => (JSON.parse(readFileSync(join(dir, SITE_INFO_PATH), 'utf8')) as SiteInfo).tip;

const errs = (schema: string, doc: unknown) => {
  const v = validator(schema);
  return v(doc) ? [] : (v.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
};

describe('API contract: schemas and OpenAPI file', () => {
  it('every schema compiles in ajv strict mode (draft 2020-12)', () => {
    expect(SCHEMA_FILES).toEqual([
      'address-capped.schema.json', 'address.schema.json', 'block-height.schema.json', 'block.schema.json', 'error.schema.json', 'name.schema.json',
      'names.schema.json', 'site-info.schema.json', 'stats.schema.json', 'tx.schema.json',
    ]);
    for (const f of SCHEMA_FILES) {
      const s = JSON.parse(readDoc(`schemas/${f}`)) as { $schema: string };
      expect(s.$schema, f).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(validator(f), f).toBeTypeOf('function');
    }
  });

  it('each schema object has the keys of its TypeScript document type (contract/documents.ts)', () => {
    const files = Object.fromEntries(SCHEMA_FILES.map((f) => [f, JSON.parse(readDoc(`schemas/${f}`)) as unknown]));
    expect(typeMismatches(files, DOCUMENT_KEYS)).toEqual([]);
    expect(Object.keys(DOCUMENT_KEYS).length).toBeGreaterThan(20);
    // The comparison can fail: a field the type lacks, a field made optional, a new closed object.
    const tx = JSON.parse(readDoc('schemas/tx.schema.json')) as { properties: Record<string, unknown>; required: string[]; $defs: Record<string, unknown> };
    tx.properties.confirmations = { type: 'integer' };
    tx.required = tx.required.filter((k) => k !== 'nid');
    tx.$defs.extra = { type: 'object', additionalProperties: false, properties: { a: true } };
    expect(typeMismatches({ ...files, 'tx.schema.json': tx }, DOCUMENT_KEYS)).toEqual([
      'tx.schema.json: schema properties [block, blocknumber, confirmations, hash, in, lock_time, nid, out, size, time, ver, vin_sz, vout_sz], type keys [block, blocknumber, hash, in, lock_time, nid, out, size, time, ver, vin_sz, vout_sz]',
      'tx.schema.json: schema requires [block, blocknumber, hash, in, lock_time, out, size, time, ver, vin_sz, vout_sz], the type [block, blocknumber, hash, in, lock_time, nid, out, size, time, ver, vin_sz, vout_sz]',
      'tx.schema.json#/$defs/extra: a closed schema object without a document type',
    ]);
    // The key tables follow the types at compile time (tsc fails when one does not).
    const right = { value: 'required', scriptPubKey: 'required', address: 'optional', next_in: 'optional' } as const satisfies KeyTable<TxOut>;
    // @ts-expect-error a key table must list every key of its type
    const missing = { value: 'required', scriptPubKey: 'required', address: 'optional' } as const satisfies KeyTable<TxOut>;
    // @ts-expect-error ...and no other
    const extra = { ...right, confirmations: 'optional' } as const satisfies KeyTable<TxOut>;
    // @ts-expect-error ...and mark each as the type does
    const wrong = { ...right, address: 'required' } as const satisfies KeyTable<TxOut>;
    expect([right, missing, extra, wrong]).toHaveLength(4);
    expect(DOCUMENT_KEYS['tx.schema.json#/$defs/output']).toEqual(right);
  });

  it('openapi.json is a valid OpenAPI 3.1 description whose schema references all resolve', async () => {
    const spec = JSON.parse(readDoc('openapi.json')) as Record<string, unknown>;
    const openapi = await openApiValidator();
    const res = await openapi.validate(spec);
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    expect(openapi.version).toBe('3.1');
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') refs.push(x);
        else walk(x);
      }
    };
    walk(JSON.parse(readDoc('openapi.json'))); // a fresh copy: the validator resolves references in place
    const external = refs.filter((r) => !r.startsWith('#'));
    expect(external.length).toBeGreaterThan(10);
    for (const r of external) {
      expect(r).toMatch(/^schemas\/[a-z-]+\.schema\.json(#\/\$defs\/[A-Za-z]+)?$/);
      expect(() => validator(r.slice('schemas/'.length)), r).not.toThrow();
    }
    // Every schema but site-info (not served by routers) is the answer of some path.
    const used = new Set(external.map((r) => r.slice('schemas/'.length).split('#')[0]));
    expect([...used].sort()).toEqual(SCHEMA_FILES.filter((f) => f !== 'site-info.schema.json'));
    expect(Object.keys(spec.paths as object).sort()).toEqual([
      '/address/{address}.json', '/block-height/{height}.json', '/block/{hash}.bin', '/block/{hash}.hex', '/block/{hash}.json', '/name/{name}.json', '/names.json',
      '/stats.json', '/tx/{txid}.bin', '/tx/{txid}.hex', '/tx/{txid}.json',
    ]);
  });

  it('a broken OpenAPI file fails the validator', async () => {
    type Spec = { info?: unknown; paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> } }> };
    const spec = () => JSON.parse(readDoc('openapi.json')) as Spec;
    const noInfo = spec();
    delete noInfo.info;
    expect((await (await openApiValidator()).validate(noInfo)).valid).toBe(false);
    const noDescription = spec();
    noDescription.paths['/stats.json']!.get.responses['200'] = { content: {} }; // a response without description
    expect((await (await openApiValidator()).validate(noDescription)).valid).toBe(false);
    const badRef = spec();
    badRef.paths['/stats.json']!.get.responses['200']!.content['application/json']!.schema.$ref = 'schemas/nope.schema.json';
    expect((await (await openApiValidator()).validate(badRef)).valid).toBe(false);
  });

  it('docs/api.md names every schema, every path and the contract URLs', () => {
    const md = readDoc('api.md');
    for (const f of SCHEMA_FILES) expect(md, f).toContain(`schemas/${f}`);
    for (const p of ['/tx/', '/block/', '/block-height/', '/address/', '/name/', '/names.json', '/stats.json', '/openapi.json', '/schemas/']) expect(md, p).toContain(p);
    for (const f of WITH_FLAGS) expect(md, f).toContain(`with_${f}`);
    // The README points at this contract, not at reference files the repository does not hold.
    const readme = readFileSync(join(DOCS, '..', 'README.md'), 'utf8');
    expect(readme).toContain('docs/api.md');
    for (const ref of ['api-spec.md', 'decisions.md', 'webbtc-api.md']) expect(readme, ref).not.toContain(ref);
  });

  it('README and docs/*.md link only to files the repository holds and to headings that exist', () => {
    const repo = join(DOCS, '..');
    const pages = ['README.md', ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    // GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens.
    const anchors = (md: string) => new Set([...md.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')));
    const broken: string[] = [];
    for (const page of pages) {
      const md = readFileSync(join(repo, page), 'utf8');
      // Files outside the repository (the shared test data, reference texts) are not for readers.
      for (const ref of ['../shared', 'static-hosting.md', 'api-spec.md', 'decisions.md', 'webbtc-api.md']) expect(md, `${page}: ${ref}`).not.toContain(ref);
      for (const [, target] of md.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = path === '' ? join(repo, page) : resolve(dirname(join(repo, page)), path);
        if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor !== undefined && !anchors(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('contractFiles() is docs/openapi.json and every docs/schemas file, byte for byte', () => {
    const files = contractFiles();
    expect([...files.keys()]).toEqual(['openapi.json', ...SCHEMA_FILES.map((f) => `schemas/${f}`)]);
    for (const [rel, content] of files) expect(content, rel).toBe(readDoc(rel));
  });
});

describe('API contract: the demo build', () => {
  let dir: string;
  let out: string;
  let capped: string;
  const json = (rel: string) => JSON.parse(readFileSync(join(out, rel), 'utf8')) as Record<string, unknown>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-contract-'));
    out = join(dir, 'out');
    capped = join(dir, 'capped');
    await buildSnapshot({ source: demoSource(), outDir: out });
    await buildSnapshot({ source: demoSource(), outDir: capped, pretty: true, maxAddressTxouts: 3 });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('every JSON document validates against its schema', () => {
    const { counts, failures } = checkTree(out);
    expect(failures).toEqual([]);
    const files = readFileSync(join(out, MANIFEST_PATH), 'utf8').trim().split('\n').length;
    expect(counts).toMatchObject({ openapi: 1, schema: SCHEMA_FILES.length, manifest: 1 });
    for (const k of ['tx', 'block', 'address', 'name', 'stats', 'error']) expect(counts[`${k}.schema.json`], k).toBeGreaterThan(0);
    // 151 main + 2 side + 1 orphan blocks; 64 variants of each of the 13 names.
    expect(counts['block.schema.json']).toBe(154);
    expect(counts['name.schema.json']).toBe(64 * 13);
    console.log(`demo build: ${files} files, validated ${JSON.stringify(counts)}`);
  });

  it('the pretty build with capped addresses validates too, capped documents included', () => {
    const { counts, failures } = checkTree(capped);
    expect(failures).toEqual([]);
    const info = JSON.parse(readFileSync(join(capped, SITE_INFO_PATH), 'utf8')) as SiteInfo;
    expect(info.cappedAddresses.length).toBeGreaterThan(0);
    expect(counts['address-capped.schema.json']).toBe(info.cappedAddresses.length);
    expect(counts['address.schema.json']).toBeGreaterThan(0);
  });

  it('the tree check fails on a tampered tree', () => {
    const txFile = readdirSync(join(capped, 'tx')).find((f) => f.endsWith('.json'))!;
    const tx = JSON.parse(readFileSync(join(capped, 'tx', txFile), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(capped, 'tx', txFile), JSON.stringify({ ...tx, confirmations: 1 }));
    const variant = 'v/height/name/d/history.json';
    const rec = JSON.parse(readFileSync(join(capped, variant), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(capped, variant), JSON.stringify({ ...rec, block: tip(capped) })); // a field its query did not ask for
    appendFileSync(join(capped, MANIFEST_PATH), `${'0'.repeat(64)} 2 surprise.json\n`);
    writeFileSync(join(capped, 'surprise.json'), '{}');
    const { failures } = checkTree(capped);
    expect(failures.map((f) => f.split(':')[0])).toEqual([`tx/${txFile}`, variant, 'surprise.json']);
    expect(failures[0]).toContain('must NOT have additional properties');
  });

  it('what the router answers is what openapi.json documents (status, content type, body schema)', () => {
    type Media = Record<string, { schema: Record<string, unknown> }>;
    type Op = { responses: Record<string, { $ref?: string; content?: Media }> };
    const spec = JSON.parse(readDoc('openapi.json')) as { paths: Record<string, { get: Op }>; components: { responses: Record<string, { content?: Media }> } };
    const templates = Object.keys(spec.paths).map((t) => ({
      t,
      re: new RegExp('^' + t.replace(/[.]/g, '\\.').replace(/\{[a-z]+\}/g, '(.+)') + '$'),
    }));
    const docFile = readdirSync(join(out, 'tx')).find((f) => f.endsWith('.json'))!.slice(0, -5);
    const addr = readdirSync(join(out, 'address'))[0]!.slice(0, -5);
    const cappedInfo = JSON.parse(readFileSync(join(capped, SITE_INFO_PATH), 'utf8')) as SiteInfo;
    const cases: [string, string, number][] = [
      [out, `/tx/${docFile}.json`, 200], [out, `/tx/${docFile}.bin`, 200], [out, `/tx/${docFile.toUpperCase()}.hex`, 200],
      [out, `/tx/${'0'.repeat(64)}.json`, 404], [out, '/tx/xyz.bin', 404],
      [out, `/block/${tip(out)}.json`, 200], [out, `/block/${tip(out)}.bin`, 200], [out, `/block/${'f'.repeat(64)}.hex`, 404],
      [out, '/block-height/0.json', 200], [out, '/block-height/99999.json', 404], [out, '/block-height/007.json', 404],
      [out, `/address/${addr}.json`, 200], [out, '/address/nope.json', 404], [out, '/address/mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn.json', 404],
      [capped, `/address/${cappedInfo.cappedAddresses[0]}.json`, 500],
      [out, '/name/d/history.json', 200], [out, '/name/d%2Fhistory.json?history&with_all', 200], [out, '/name/d/history.json?with_rawtx=0', 200],
      [out, '/name/d/nope.json', 404], [out, '/stats.json', 200], [out, '/name/a%zz.json', 400], [out, `/name/${'a'.repeat(5000)}.json`, 414],
    ];
    for (const [tree, target, status] of cases) {
      const site = makeRouterSite(JSON.parse(readFileSync(join(tree, SITE_INFO_PATH), 'utf8')) as SiteInfo);
      const r = route(target, site);
      let answer: { status: number; type: string; body: Buffer };
      if (r.type === 'error') answer = { status: r.status, type: r.contentType, body: Buffer.from(r.body) };
      else {
        let body: Buffer | undefined;
        try {
          body = readFileSync(join(tree, r.file));
        } catch {
          body = undefined;
        }
        answer = body ? { status: r.status, type: r.contentType, body } : { status: r.missing.status, type: r.missing.contentType, body: Buffer.from(r.missing.body) };
      }
      expect(answer.status, target).toBe(status);
      const path = target.split('?')[0]!;
      const tpl = templates.find(({ re }) => re.test(path.toLowerCase()));
      expect(tpl, target).toBeDefined();
      let res = spec.paths[tpl!.t]!.get.responses[String(status)];
      expect(res, `${target} → ${status} is documented`).toBeDefined();
      if (res!.$ref) res = spec.components.responses[res!.$ref.split('/').pop()!];
      const media = Object.entries(res!.content ?? {}).find(([m]) => answer.type.split(';')[0] === m.split(';')[0]);
      expect(media, `${target}: ${answer.type} is documented`).toBeDefined();
      if (answer.type.startsWith('application/json')) {
        const rewrite = (v: unknown): unknown =>
          Array.isArray(v) ? v.map(rewrite) : v && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === '$ref' ? (x as string).replace(/^schemas\//, '') : rewrite(x)]))
            : v;
        const validate = ajv.compile(rewrite(media![1].schema) as object);
        expect(validate(JSON.parse(answer.body.toString('utf8'))), `${target}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
  });

  it('deliberately broken documents fail', () => {
    const txFile = readdirSync(join(out, 'tx')).find((f) => f.endsWith('.json'))!;
    const tx = json(`tx/${txFile}`);
    expect(errs('tx.schema.json', tx)).toEqual([]);
    expect(errs('tx.schema.json', { ...tx, extra: 1 })).not.toEqual([]); // an extra field
    expect(errs('tx.schema.json', { ...tx, ver: String(tx.ver) })).not.toEqual([]); // a wrong type
    expect(errs('tx.schema.json', { ...tx, size: 1.5 })).not.toEqual([]); // not an integer
    const { hash: _h, ...noHash } = tx;
    expect(errs('tx.schema.json', noHash)).not.toEqual([]); // a missing field
    expect(errs('tx.schema.json', { ...tx, hash: (tx.hash as string).toUpperCase() })).not.toEqual([]);
    const outs = tx.out as Record<string, unknown>[];
    expect(errs('tx.schema.json', { ...tx, out: [{ ...outs[0], value: 5 }] })).not.toEqual([]); // amount as a number
    expect(errs('tx.schema.json', { ...tx, out: [{ ...outs[0], value: '5.0' }] })).not.toEqual([]); // not 8 decimals
    const coinbase = { prev_out: { hash: '0'.repeat(64), n: 4294967295 }, coinbase: '00' };
    expect(errs('tx.schema.json', { ...tx, in: [coinbase] })).toEqual([]);
    expect(errs('tx.schema.json', { ...tx, in: [{ ...coinbase, prev_out: { hash: '0'.repeat(64), n: 0 } }] })).not.toEqual([]);
    expect(errs('tx.schema.json', { ...tx, in: [{ ...coinbase, scriptSig: '' }] })).not.toEqual([]); // both scripts
    expect(errs('tx.schema.json', { ...tx, in: [{ ...coinbase, witness: [] }] })).not.toEqual([]);

    const block = json(`block/${tip(out)}.json`);
    expect(errs('block.schema.json', block)).toEqual([]);
    const btx = (block.tx as Record<string, unknown>[])[0]!;
    expect(errs('block.schema.json', { ...block, tx: [{ ...btx, blocknumber: 1 }] })).not.toEqual([]); // tx fields a block's txs lack
    expect(errs('block.schema.json', { ...block, height: 150 })).not.toEqual([]);
    expect(errs('block.schema.json', { ...block, mrkl_tree: [null] })).toEqual([]); // the original's answer for duplicate txids
    expect(errs('block.schema.json', { ...block, mrkl_tree: [null, null] })).not.toEqual([]);
    expect(errs('block.schema.json', { ...block, mrkl_tree: [] })).not.toEqual([]);
    const aux = block.aux_pow as Record<string, unknown>;
    expect(errs('block.schema.json', { ...block, aux_pow: { ...aux, parent_block: { ...(aux.parent_block as object), n_tx: 1 } } })).not.toEqual([]);

    const addrFile = readdirSync(join(out, 'address'))[0]!;
    const addr = json(`address/${addrFile}`);
    expect(errs('address.schema.json', addr)).toEqual([]);
    expect(errs('address.schema.json', { ...addr, coin_in: String(addr.coin_in) })).not.toEqual([]);
    expect(errs('address.schema.json', { ...addr, transactions: { nothex: {} } })).not.toEqual([]);
    expect(errs('address-capped.schema.json', { error: 'Too many outputs for this address (12)' })).toEqual([]);
    expect(errs('address-capped.schema.json', { error: 'Too many outputs for this address (12)', count: 12 })).not.toEqual([]);

    const name = json('name/d/history.json');
    expect(errs('name.schema.json', name)).toEqual([]);
    expect(errs('name.schema.json', { ...name, owner: 'x' })).not.toEqual([]);
    expect(errs('name.schema.json', { ...name, height: '12' })).not.toEqual([]);
    expect(errs('name.schema.json', [])).not.toEqual([]); // a history is never empty
    expect(errs('name.schema.json', { ...name, mrkl_branch: [null, null] })).not.toEqual([]);
    expect(errs('name.schema.json', { ...name, mrkl_branch: [null] })).toEqual([]); // the original's answer for duplicate txids

    const stats = json('stats.json');
    const { work: _w, ...noWork } = stats;
    expect(errs('stats.schema.json', stats)).toEqual([]);
    expect(errs('stats.schema.json', noWork)).not.toEqual([]);
    const { names: _n, ...noNames } = stats; // name script types without the names count
    expect(errs('stats.schema.json', noNames)).not.toEqual([]);

    expect(errs('error.schema.json', { error: 'Tx 00 not found.' })).toEqual([]);
    expect(errs('error.schema.json', { error: 'Tx 00 not found.', status: 404 })).not.toEqual([]);
    expect(errs('error.schema.json', { error: 'Something else.' })).not.toEqual([]);
    expect(errs('site-info.schema.json#/$defs/public', { ...json(SITE_INFO_PATH) })).not.toEqual([]); // the internal copy has cappedAddresses
  });

  it('a names.json shaped as documented validates; broken ones fail', () => {
    // Built from the tree's own name documents (the list itself is written by the UI's build step).
    const info = json(SITE_INFO_PATH) as unknown as SiteInfo;
    const entries = ['d/history', 'd/empty', 'trail~2F'].map((path) => {
      const doc = json(`v/height/name/${path}.json`) as { name: string; height: number; expires_in: number };
      return { name: doc.name, path, height: doc.height, expires_in: doc.expires_in };
    });
    const doc = { height: info.height, count: entries.length, names: entries.sort((a, b) => (a.path < b.path ? -1 : 1)) };
    expect(errs('names.schema.json', doc)).toEqual([]);
    expect(errs('names.schema.json', { ...doc, names: [{ ...entries[0], value: 'x' }] })).not.toEqual([]);
    expect(errs('names.schema.json', { ...doc, names: [{ ...entries[0], path: '/name/d/history.json' }] })).not.toEqual([]);
    expect(errs('names.schema.json', { ...doc, names: [{ ...entries[0], path: 'd/../x' }] })).not.toEqual([]);
    const { count: _c, ...noCount } = doc;
    expect(errs('names.schema.json', noCount)).not.toEqual([]);
  });

  it('the tree holds the contract files, the router serves them as JSON, verify accepts them', async () => {
    for (const [rel, content] of contractFiles()) expect(readFileSync(join(out, rel), 'utf8'), rel).toBe(content);
    const site = makeRouterSite(json(SITE_INFO_PATH) as unknown as SiteInfo);
    for (const target of ['/openapi.json', '/schemas/tx.schema.json', '/schemas/name.schema.json']) {
      const r = route(target, site);
      expect(r.type, target).toBe('file');
      if (r.type === 'file') {
        expect(r.file).toBe(target.slice(1));
        expect(r.contentType).toBe('application/json; charset=utf-8');
        expect(r.status).toBe(200);
      }
    }
    const report = await verifySnapshot(out);
    expect(report.ok).toBe(true);
  });
});

describeShared('chaindata/nbitcoin')('API contract: the Bitcoin mainnet 0–599 build', () => {
  let dir: string;
  let out: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-contract-btc-'));
    out = join(dir, 'out');
    const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
    const source = memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
    await buildSnapshot({ source, outDir: out });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('every JSON document validates against its schema', () => {
    const { counts, failures } = checkTree(out);
    expect(failures).toEqual([]);
    expect(counts['tx.schema.json']).toBe(616);
    expect(counts['block.schema.json']).toBe(600);
    expect(counts['address.schema.json']).toBe(614);
    expect(counts['stats.schema.json']).toBe(1);
    expect(counts['name.schema.json']).toBeUndefined();
    console.log(`bitcoin 0–599 build: validated ${JSON.stringify(counts)}`);
  });
});

// Namecoin Core's regtest chain: AuxPoW blocks, stale blocks and name operations of a real node.
describeShared('chaindata/namecoin-core-regtest')('API contract: the Namecoin Core regtest build', () => {
  let dir: string;
  let out: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-contract-nmc-'));
    out = join(dir, 'out');
    const src = await openBlocksDir(chainPath('namecoin-core-regtest', 'blocks'), NETWORKS['namecoin-regtest']);
    try {
      await buildSnapshot({ source: src, outDir: out, hosts: [] });
    } finally {
      await src.close();
    }
  }, 180_000);
  afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it('every JSON document validates against its schema', () => {
    const { counts, failures } = checkTree(out);
    expect(failures).toEqual([]);
    const blocks = readdirSync(join(out, 'block')).filter((f) => f.endsWith('.json')).length;
    expect(counts['block.schema.json']).toBe(blocks);
    expect(counts['name.schema.json']).toBeGreaterThan(0);
    const aux = readdirSync(join(out, 'block')).filter((f) => f.endsWith('.json')).some((f) => 'aux_pow' in (JSON.parse(readFileSync(join(out, 'block', f), 'utf8')) as object));
    expect(aux, 'the tree has merge-mined blocks').toBe(true);
    console.log(`namecoin regtest build: validated ${JSON.stringify(counts)}`);
  });
});
