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
 *  - a main-chain block ends the main chain below it: its descendants cannot be built, so the
 *    snapshot stops at the height below (`stoppedAt`) and the build says so loudly.
 */
import { toDisplayHex } from '../chain/hash.js';
import { parseValidBlock, type Invalid, type InvalidKind } from '../chain/validate.js';
import type { BlockPlace, ChainSource, OffChainBlock, RejectedBlock, SourceBlock } from './types.js';

export interface ValidationOptions {
  /** Skip invalid blocks with a warning instead of failing (see the module comment). */
  skipInvalid?: boolean;
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
  /** skipInvalid: the main-chain block the main chain stopped below, if any. */
  readonly stoppedAt: InvalidBlock | undefined;
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
    async tip() {
      reportRejected();
      return source.tip();
    },
    hashAt: (height) => source.hashAt(height),
    scanWork: source.scanWork && ((height, from) => source.scanWork!(height, from)),
    async *mainChain(height: number, from = 0): AsyncGenerator<SourceBlock> {
      reportRejected();
      let prev = from > 0 ? await source.hashAt(from - 1) : undefined;
      let expect = from;
      for await (const sb of source.mainChain(height, from)) {
        let invalid: Invalid | undefined;
        let block;
        if (sb.height !== expect) invalid = { kind: 'bad-prevblk', detail: `delivered as height ${sb.height}, expected ${expect}` };
        else {
          const res = parseValidBlock(sb.raw, net, sb.height);
          invalid = res.invalid;
          block = res.block;
        }
        if (block && !invalid) {
          if (block.header.id !== sb.hash) invalid = { kind: 'bad-hash', detail: `the header hashes to ${block.header.id}` };
          else if (expect === 0 && sb.hash !== net.genesis) invalid = { kind: 'bad-prevblk', detail: `height 0 is not the ${net.name} genesis ${net.genesis}` };
          else if (prev !== undefined && toDisplayHex(block.header.prevHash) !== prev) {
            invalid = { kind: 'bad-prevblk', detail: `its prev-hash ${toDisplayHex(block.header.prevHash)} is not block ${prev} at height ${expect - 1}` };
          }
        }
        if (invalid) {
          const bad = describe(source, sb.hash, sb.height, 'main', sb.place, invalid);
          if (skip) {
            bad.message += `; the main chain stops at height ${sb.height - 1}: the blocks above it cannot be built`;
            stoppedAt = bad;
          }
          fail(bad);
          return;
        }
        yield { ...sb, block };
        prev = sb.hash;
        expect++;
      }
    },
    async *offChain(height: number): AsyncGenerator<OffChainBlock> {
      reportRejected();
      const left = new Set<string>(stoppedAt ? [stoppedAt.hash] : []);
      for await (const ob of source.offChain(height)) {
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
