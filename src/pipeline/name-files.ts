import { decodeNameBytes, renderName, type NameRecord } from '../render/name.js';
import { renderNameList, type NameListEntry } from '../render/name-list.js';
import { ALL_NAME_VARIANTS, NAMES_PATH, encodeNamePath, namePathEncoded } from '../contract/layout.js';
import type { StageContext } from './context.js';

/**
 * Every name with its 64 query variants (expires_in moves with every block), and names.json
 * listing them all; names left without operations are deleted. Returns [names, non-UTF-8 names].
 */
export async function writeNames(ctx: StageContext): Promise<[number, number]> {
  const { index, changes } = ctx;
  const depth = index.net.nameExpirationDepth!(ctx.height);
  // Every record's expires_in counts from the snapshot height: at another height than the published one, every document of every name changes.
  const moved = changes !== undefined && changes.fromHeight !== ctx.height;
  let names = 0;
  let nonUtf8 = 0;
  let current: Buffer | undefined;
  let history: NameRecord[] = [];
  const seen = new Set<string>();
  const list: NameListEntry[] = [];
  const flush = () => {
    if (!current) return;
    names++;
    const last = history[history.length - 1]!;
    if (changes) seen.add(current.toString('latin1'));
    const enc = encodeNamePath(current);
    for (const v of ALL_NAME_VARIANTS) {
      const rel = namePathEncoded(enc, v);
      if (ctx.writer.keeps(rel)) ctx.writer.write(rel, renderName(history, v, ctx.pretty), moved);
    }
    list.push({ name: last.name, path: enc, height: last.height, expiresIn: last.expiresIn });
  };
  ctx.progress.begin('names');
  const ops = index.nameOpCount();
  let done = 0;
  for (const op of index.nameOps()) {
    ctx.progress.update(done++, ops, 'name ops');
    if (!current || !current.equals(op.name)) {
      flush();
      current = op.name;
      history = [];
      if (names % 64 === 0) await ctx.writer.backpressure();
    }
    const name = decodeNameBytes(op.name);
    const value = decodeNameBytes(op.value);
    if (!name.utf8 || !value.utf8) nonUtf8++;
    history.push({
      name: name.text,
      value: value.text,
      txid: op.txid,
      address: op.address,
      expiresIn: op.height + depth - ctx.height,
      block: op.block,
      height: op.height,
      txIndex: op.txIndex,
      rawtx: op.rawtx,
      mrklBranch: op.mrklBranch,
    });
  }
  flush();
  ctx.progress.update(done, ops, 'name ops');
  ctx.writer.write(NAMES_PATH, renderNameList(ctx.height, list, ctx.pretty));
  for (const gone of changes?.names ?? []) {
    if (seen.has(gone)) continue;
    const enc = encodeNamePath(Buffer.from(gone, 'latin1'));
    for (const v of ALL_NAME_VARIANTS) ctx.writer.delete(namePathEncoded(enc, v));
  }
  return [names, nonUtf8];
}
