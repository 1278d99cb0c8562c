/**
 * The one place every chain source's blocks are validated (blocks dir, RPC, in-memory/demo):
 * a wrapper that parses each block, runs src/chain/validate.ts on it and checks that the
 * main chain is continuous (heights in order, each block's prev-hash the block below, the
 * network's genesis at height 0).
 *
 * A failing block is an {@link InvalidBlockError} naming the kind of failure, where the block
 * is (blk file and absolute offset, or the source's description: the RPC URL), its height and
 * hash. With `skipInvalid` it is skipped instead, with a warning:
 *  - an off-chain (side or orphan) block is left out, and so are side blocks built on it;
 *  - a main-chain block, where the source chose the chain by header work (blocks dir, in-memory:
 *    `source.choice`), is marked invalid with its descendants and the chain is chosen again among
 *    the other blocks, by work — Bitcoin Core's best valid chain (InvalidChainFound, then
 *    ActivateBestChain again). If that chain ends below the height asked for, the snapshot stops
 *    at its tip (`stoppedAt`) and the build says so loudly;
 *  - a main-chain block of a source whose node chose (RPC) ends the main chain below it.
 *
 * So that the chain is known before the scan (the snapshot height, the fork with an earlier
 * build), the main blocks that decide between branches (`choice.decisiveHeights()`: those another
 * branch matches or beats in work, and the block that settles each run) are validated first,
 * wherever they are; without `skipInvalid` an invalid one fails the build there, naming it and
 * the chain the build would take without it.
 */
import { toDisplayHex } from '../chain/hash.js';
import type { Block } from '../chain/block.js';
import { parseValidBlock, type Invalid, type InvalidKind } from '../chain/validate.js';
import { ScanParser, type Parsed, type ScanThreadOptions } from './scan-pool.js';
import type { BlockPlace, ChainSource, ChainTip, OffChainBlock, RejectedBlock, SourceBlock } from './types.js';

export interface ValidationOptions {
  /** Skip invalid blocks with a warning instead of failing (see the module comment). */
  skipInvalid?: boolean;
  /** Where the main chain's blocks are parsed, hashed and validated (default: the main thread). */
  scan?: ScanThreadOptions;
}

/** An invalid block as reported: what, where, and the one-line message. */
export interface InvalidBlock {
  kind: InvalidKind;
  hash: string;
  height: number | undefined;
  /** 'main' for the main chain, the off-chain kind, or 'rejected' (set aside by the source before choosing the chain). */
  chain: 'main' | 'side' | 'orphan' | 'rejected';
  /** "blk00001.dat offset 17243" or the source's description (RPC URL). */
  where: string;
  message: string;
}

export class InvalidBlockError extends Error {
  constructor(readonly invalid: InvalidBlock) {
    super(invalid.message);
    this.name = 'InvalidBlockError';
  }
}

export interface ValidatedSource extends ChainSource {
  /** Invalid blocks skipped so far (skipInvalid only). */
  readonly skipped: readonly InvalidBlock[];
  /** skipInvalid: the main-chain block that made the main chain end below the height asked for, if any. */
  readonly stoppedAt: InvalidBlock | undefined;
  /** How many threads parsed the main chain's blocks (0: the main thread). */
  readonly scanThreads: number;
}

function describe(source: ChainSource, hash: string, height: number | undefined, chain: InvalidBlock['chain'], place: BlockPlace | undefined, invalid: Invalid): InvalidBlock {
  const where = place ? `${place.file} offset ${place.offset + (invalid.offset ?? 0)}` : source.description;
  const what = chain === 'side' || chain === 'orphan' ? ` (${chain} block)` : '';
  let message = `${where}: block ${hash}${height !== undefined ? ` at height ${height}` : ''}${what} is invalid: ${invalid.kind}: ${invalid.detail}`;
  if (invalid.offset !== undefined) message += place ? ` (the block starts at offset ${place.offset})` : ` (byte ${invalid.offset} of the block)`;
  return { kind: invalid.kind, hash, height, chain, where, message };
}

/** Wraps a source so every block it delivers is validated (see the module comment). */
export function validatedSource(source: ChainSource, opts: ValidationOptions = {}): ValidatedSource {
  const net = source.network;
  const skip = opts.skipInvalid ?? false;
  const skipped: InvalidBlock[] = [];
  const warnings: string[] = [];
  let stoppedAt: InvalidBlock | undefined;
  let rejectedDone = false;
  let scanThreads = 0;
  /** Main blocks set aside through source.choice (reported then, not again as off-chain blocks). */
  const setAside = new Set<string>();
  /** Decisive blocks found valid (not read again when the chain is chosen again). */
  const known = new Set<string>();

  /** Strict: throws; skipInvalid: records the block and a warning. */
  const fail = (bad: InvalidBlock): void => {
    if (!skip) throw new InvalidBlockError(bad);
    skipped.push(bad);
    warnings.push(`skipped: ${bad.message}`);
  };

  /** Blocks the source set aside before choosing the chain: reported once, before any block. */
  const reportRejected = (): void => {
    if (rejectedDone) return;
    rejectedDone = true;
    const rejected: readonly RejectedBlock[] = source.rejected ?? [];
    for (const r of rejected) {
      const bad = describe(source, r.hash, r.height, 'rejected', r.place, r.invalid);
      bad.message += '; it is left out of the chain, so the blocks built on it do not connect';
      if (!skip && rejected.length > 1) bad.message += ` (${rejected.length} such blocks in ${source.description})`;
      fail(bad);
    }
  };

  /** A main-chain block's checks beyond its own rules: the height, its hash, genesis, the link to the block below. */
  const checkMain = (sb: SourceBlock, expect: number, prev: string | undefined, parsed?: Parsed): { block?: Block; invalid?: Invalid } => {
    if (sb.height !== expect) return { invalid: { kind: 'bad-prevblk', detail: `delivered as height ${sb.height}, expected ${expect}` } };
    const { block, invalid } = parsed ?? parseValidBlock(sb.raw, net, sb.height);
    if (!block || invalid) return { block, invalid };
    if (block.header.id !== sb.hash) return { invalid: { kind: 'bad-hash', detail: `the header hashes to ${block.header.id}` } };
    if (expect === 0 && sb.hash !== net.genesis) return { invalid: { kind: 'bad-prevblk', detail: `height 0 is not the ${net.name} genesis ${net.genesis}` } };
    if (prev !== undefined && toDisplayHex(block.header.prevHash) !== prev) {
      return { invalid: { kind: 'bad-prevblk', detail: `its prev-hash ${toDisplayHex(block.header.prevHash)} is not block ${prev} at height ${expect - 1}` } };
    }
    return { block };
  };

  const tipText = (t: ChainTip) => `height ${t.height} (${t.hash})`;

  /** Marks a main-chain block invalid at the source, which chooses its chain again; says so in the block's message. */
  const chooseWithout = (bad: InvalidBlock): { tip: ChainTip; fork: number } => {
    const r = source.choice!.invalidate(bad.hash);
    setAside.add(bad.hash);
    const with_ = r.failed > 1 ? ` and the ${r.failed - 1} block(s) built on it` : '';
    if (r.fork === bad.height! - 1 && r.tip.height === r.fork) bad.message += `; the main chain stops at height ${r.fork}: the blocks above it cannot be built`;
    else bad.message += `; it${with_} ${r.failed > 1 ? 'are' : 'is'} left out and the main chain is chosen again by work: to ${tipText(r.tip)}, forking at height ${r.fork}`;
    return r;
  };

  /**
   * Validates the main blocks that decide between branches; an invalid one is set aside and the
   * chain chosen again (skipInvalid) or fails the build naming the chain it would take without it.
   */
  const settle = async (): Promise<void> => {
    const choice = source.choice;
    if (!choice) return;
    for (;;) {
      let found: { sb: SourceBlock; invalid: Invalid } | undefined;
      const heights: number[] = [];
      for (const h of choice.decisiveHeights()) if (!known.has(await source.hashAt(h))) heights.push(h);
      for (let k = 0; k < heights.length && !found; ) {
        let end = k;
        while (end + 1 < heights.length && heights[end + 1] === heights[end]! + 1) end++;
        const [from, to] = [heights[k]!, heights[end]!];
        let prev = from > 0 ? await source.hashAt(from - 1) : undefined;
        let expect = from;
        for await (const sb of source.mainChain(to, from)) {
          const { invalid } = checkMain(sb, expect, prev);
          if (invalid) {
            found = { sb, invalid };
            break;
          }
          known.add(sb.hash);
          prev = sb.hash;
          expect++;
        }
        k = end + 1;
      }
      if (!found) return;
      const { sb, invalid } = found;
      const bad = describe(source, sb.hash, sb.height, 'main', sb.place, invalid); // never genesis: heights start at 1
      if (!skip) {
        const before = await source.tip();
        const r = choice.invalidate(sb.hash);
        bad.message += `; it is on the main chain the source chose by work, to ${tipText(before)}; without it${r.failed > 1 ? ` and the ${r.failed - 1} block(s) built on it` : ''} the chain with the most work ends at ${tipText(r.tip)}: --skip-invalid builds the best valid chain`;
        throw new InvalidBlockError(bad);
      }
      chooseWithout(bad);
      fail(bad);
    }
  };
  let settled: Promise<void> | undefined;
  /** Before the first answer: rejected headers reported, the decisive blocks validated. */
  const ready = (): Promise<void> =>
    (settled ??= (async () => {
      reportRejected();
      await settle();
    })());

  return {
    network: net,
    description: source.description,
    get warnings() {
      return [...source.warnings, ...warnings];
    },
    skipped,
    get stoppedAt() {
      return stoppedAt;
    },
    get scanThreads() {
      return scanThreads;
    },
    async tip() {
      await ready();
      return source.tip();
    },
    async hashAt(height) {
      await ready();
      return source.hashAt(height);
    },
    scanWork:
      source.scanWork &&
      (async (height, from) => {
        await ready();
        return source.scanWork!(height, from);
      }),
    async *mainChain(height: number, from = 0): AsyncGenerator<SourceBlock> {
      await ready();
      let prev = from > 0 ? await source.hashAt(from - 1) : undefined;
      let expect = from;
      let until = height;
      const parser = new ScanParser(net, opts.scan ?? { threads: 1, above: 0 });
      try {
        // Restarted where it stopped when the chain is chosen again (the new chain keeps the blocks delivered: see settle).
        scan: while (expect <= until) {
          for await (const { sb, parsed } of parser.parsed(source.mainChain(until, expect))) {
            scanThreads = Math.max(scanThreads, parser.threadCount);
            const { block, invalid } = checkMain(sb, expect, prev, parsed);
            if (invalid) {
              const bad = describe(source, sb.hash, sb.height, 'main', sb.place, invalid);
              if (skip && source.choice && sb.height === expect && expect > 0) {
                const { tip } = chooseWithout(bad);
                fail(bad);
                await settle();
                const now = await source.tip();
                if (now.height < height) stoppedAt = bad;
                if (now.height >= expect - 1 && (await source.hashAt(expect - 1)) !== prev) {
                  throw new Error(`${source.description}: the chain chosen without block ${bad.hash} (to ${tipText(tip)}) does not keep block ${prev} at height ${expect - 1}`);
                }
                until = Math.min(height, now.height);
                continue scan;
              }
              if (skip) {
                bad.message += `; the main chain stops at height ${sb.height - 1}: the blocks above it cannot be built`;
                stoppedAt = bad;
              }
              fail(bad);
              return;
            }
            yield { ...sb, block, ...(parsed?.addresses && { addresses: parsed.addresses }) };
            prev = sb.hash;
            expect++;
          }
          return;
        }
      } finally {
        await parser.close();
      }
    },
    async *offChain(height: number): AsyncGenerator<OffChainBlock> {
      await ready();
      const left = new Set<string>([...(stoppedAt ? [stoppedAt.hash] : []), ...setAside]);
      for await (const ob of source.offChain(height)) {
        if (setAside.has(ob.hash)) continue; // reported when it was set aside
        const { block, invalid: bad } = parseValidBlock(ob.raw, net, ob.height);
        let invalid = bad;
        if (block && !invalid) {
          const prev = toDisplayHex(block.header.prevHash);
          if (block.header.id !== ob.hash) invalid = { kind: 'bad-hash', detail: `the header hashes to ${block.header.id}` };
          else if (left.has(prev)) invalid = { kind: 'bad-prevblk', detail: `it builds on the skipped invalid block ${prev}` };
        }
        if (invalid) {
          fail(describe(source, ob.hash, ob.height, ob.kind, ob.place, invalid));
          left.add(ob.hash);
          continue;
        }
        yield { ...ob, block };
      }
    },
    close: () => source.close(),
  };
}
