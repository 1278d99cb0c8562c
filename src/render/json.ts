/**
 * JSON text for every document of the site. Compact by default (decisions.md);
 * `pretty` follows the original's json 1.8.3 `pretty_generate` layout (2-space
 * indent, `": "`, empty arrays as `[\n\n<indent>]`, empty objects as
 * `{\n<indent>}`). BigInt values print as exact integer digits. No trailing
 * newline.
 */

/** Already-serialized compact JSON, spliced in verbatim (re-laid-out when pretty). */
export class RawJson {
  constructor(readonly text: string) {}
}

export type JsonValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | RawJson
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue | undefined };

export function toJson(value: JsonValue, pretty = false): string {
  return pretty ? writePretty(value, 0) : writeCompact(value);
}

/**
 * The same text for documents with no BigInt and no RawJson inside (tx,
 * block, name): compact output goes through the native JSON.stringify.
 */
export function toPlainJson(value: JsonValue, pretty = false): string {
  return pretty ? writePretty(value, 0) : JSON.stringify(value);
}

function writeCompact(v: JsonValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      if (!Number.isSafeInteger(v)) throw new Error(`non-integer or unsafe number ${v} in a document`);
      return String(v);
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
  }
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + writeCompact(v[i] as JsonValue);
    return s + ']';
  }
  let s = '{';
  let first = true;
  for (const key in v as Record<string, JsonValue | undefined>) {
    const item = (v as Record<string, JsonValue | undefined>)[key];
    if (item === undefined) continue;
    s += (first ? '' : ',') + JSON.stringify(key) + ':' + writeCompact(item);
    first = false;
  }
  return s + '}';
}

function writePretty(v: JsonValue, depth: number): string {
  if (v instanceof RawJson) return writePretty(JSON.parse(v.text) as JsonValue, depth);
  if (v === null || typeof v !== 'object') return writeCompact(v);
  const pad = '  '.repeat(depth + 1);
  const end = '  '.repeat(depth);
  if (Array.isArray(v)) {
    if (v.length === 0) return `[\n\n${end}]`;
    return `[\n${v.map((x) => pad + writePretty(x as JsonValue, depth + 1)).join(',\n')}\n${end}]`;
  }
  const parts: string[] = [];
  for (const key in v as Record<string, JsonValue | undefined>) {
    const item = (v as Record<string, JsonValue | undefined>)[key];
    if (item === undefined) continue;
    parts.push(`${pad}${JSON.stringify(key)}: ${writePretty(item, depth + 1)}`);
  }
  if (parts.length === 0) return `{\n${end}}`;
  return `{\n${parts.join(',\n')}\n${end}}`;
}
