/**
 * The rules every chain source shares, enforced in one place around each of them (blocks dir,
 * RPC, in-memory): heights are non-negative integers, a height above the source's tip is an
 * error naming the tip, a scan `from` lies in 0..height + 1 (height + 1: nothing to scan), and a
 * closed source refuses further use. The sources themselves assume valid arguments.
 */
import type { ChainSource, OffChainBlock, SourceBlock } from './types.js';

export interface CheckedOptions {
  /** How the tip is named in the above-tip error (default "the tip"). */
  tipName?: string;
  /** Why the tip may be lower than asked (appended to the above-tip error), e.g. missing blk files. */
  tipNote?: () => string;
}

/** Wraps a source with the shared argument and state checks (see the module comment); other members pass through. */
export function checkedSource<S extends ChainSource>(source: S, opts: CheckedOptions = {}): S {
  const what = source.description;
  const tipName = opts.tipName ?? 'the tip';
  let closed = false;

  const open = (): void => {
    if (closed) throw new Error(`${what}: source is closed`);
  };
  const validHeight = (height: number, name = 'height'): void => {
    if (!Number.isInteger(height) || height < 0) throw new Error(`${what}: invalid ${name} ${height}`);
  };
  const atMostTip = async (height: number): Promise<void> => {
    open();
    validHeight(height);
    const t = await source.tip();
    if (height > t.height) {
      throw new Error(`${what}: height ${height} is above ${tipName} (height ${t.height}, ${t.hash})${opts.tipNote?.() ?? ''}`);
    }
  };

  return {
    ...source,
    tip: () => source.tip(),
    async hashAt(height: number): Promise<string> {
      await atMostTip(height);
      return source.hashAt(height);
    },
    async *mainChain(height: number, from = 0): AsyncGenerator<SourceBlock> {
      await atMostTip(height);
      validHeight(from, 'scan start');
      if (from > height + 1) throw new Error(`${what}: scan from ${from} starts above height ${height} + 1`);
      yield* source.mainChain(height, from);
    },
    async *offChain(height: number): AsyncGenerator<OffChainBlock> {
      await atMostTip(height);
      yield* source.offChain(height);
    },
    async close() {
      closed = true;
      await source.close();
    },
  };
}
