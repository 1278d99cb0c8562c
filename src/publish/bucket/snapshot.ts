/**
 * The local snapshot a publish sends: a tree (every line of its `_manifest.json`, then the
 * manifest) or a pack (the parts and index its `pack.json` names, then `pack.json`, and the
 * browsing UI's files a pack build puts beside it), with the
 * sha256 and size of each object. Files are not read whole here: a tree's hashes are its
 * manifest's, a pack's parts' hashes are in its index; the bytes are checked as they are sent.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MANIFEST_PATH, UI_FILES } from '../../contract/layout.js';
import { parseManifestLine, safePath } from '../../contract/manifest.js';
import { HEADER_SIZE, PACK_POINTER, decodeHeader, decodePartTable, decodePointer } from '../../contract/pack-format.js';
import { onPath } from '../../runtime/io-error.js';
import { WHOLE_TREE_PATHS, type LocalObject, type LocalSnapshot } from './plan.js';

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** sha256 of a file, streamed. */
export async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The snapshot in `dir`: a pack when it has `pack.json`, a tree when it has `_manifest.json`. */
export async function readLocalSnapshot(dir: string): Promise<LocalSnapshot> {
  if (existsSync(join(dir, PACK_POINTER))) return readPack(dir);
  if (existsSync(join(dir, MANIFEST_PATH))) return readTree(dir);
  throw new Error(`${dir}: neither ${MANIFEST_PATH} (a snapshot tree) nor ${PACK_POINTER} (a pack); build one with snapshot build --out ${dir}`);
}

async function readTree(dir: string): Promise<LocalSnapshot> {
  const path = join(dir, MANIFEST_PATH);
  const objects: LocalObject[] = [];
  let lineNo = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    lineNo++;
    const l = parseManifestLine(line);
    if (!l || !safePath(l.path)) throw new Error(`${path}: line ${lineNo} is not "<sha256> <size> <path>" with a safe path: ${JSON.stringify(line.slice(0, 200))}`);
    objects.push({ key: l.path, sha256: l.sha256, size: l.size, phase: WHOLE_TREE_PATHS.has(l.path) ? 'whole' : 'content' });
  }
  if (objects.length === 0) throw new Error(`${path}: empty; not a manifest this tool wrote`);
  const bytes = onPath(path, 'reading', () => readFileSync(path));
  objects.push({ key: MANIFEST_PATH, sha256: sha256Hex(bytes), size: bytes.length, phase: 'root' });
  return { kind: 'tree', objects };
}

function readAt(path: string, offset: number, length: number): Uint8Array {
  const fd = onPath(path, 'opening', () => openSync(path, 'r'));
  try {
    const b = Buffer.alloc(length);
    const n = onPath(path, 'reading', () => readSync(fd, b, 0, length, offset));
    return b.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

async function readPack(dir: string): Promise<LocalSnapshot> {
  const pointerPath = join(dir, PACK_POINTER);
  const pointerBytes = onPath(pointerPath, 'reading', () => readFileSync(pointerPath));
  const pointer = decodePointer(pointerBytes, pointerPath);
  const indexPath = join(dir, pointer.index);
  if (!existsSync(indexPath)) throw new Error(`${pointerPath} names ${pointer.index}, which is not in ${dir}`);
  const header = decodeHeader(readAt(indexPath, 0, HEADER_SIZE), indexPath);
  const table = readAt(indexPath, header.partTableOffset, header.partTableLength);
  const parts = decodePartTable(table, header.partCount, indexPath, header.partTableOffset);
  const objects: LocalObject[] = [];
  for (const p of parts) {
    const file = join(dir, p.name);
    const size = existsSync(file) ? statSync(file).size : -1;
    if (size !== p.size) throw new Error(`${indexPath} lists part ${p.name} of ${p.size} bytes; ${file} ${size < 0 ? 'is missing' : `has ${size}`}`);
    objects.push({ key: p.name, sha256: Buffer.from(p.sha256).toString('hex'), size: p.size, phase: 'content' });
  }
  objects.push({ key: pointer.index, sha256: await fileSha256(indexPath), size: statSync(indexPath).size, phase: 'content' });
  objects.push({ key: PACK_POINTER, sha256: sha256Hex(pointerBytes), size: pointerBytes.length, phase: 'root' });
  // The UI reads whichever pack pack.json names, so its files go up beside any generation.
  for (const key of UI_FILES) {
    const file = join(dir, key);
    if (!existsSync(file)) continue;
    const bytes = onPath(file, 'reading', () => readFileSync(file));
    objects.push({ key, sha256: sha256Hex(bytes), size: bytes.length, phase: 'whole' });
  }
  return { kind: 'pack', objects };
}
