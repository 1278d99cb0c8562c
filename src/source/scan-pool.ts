import { availableParallelism } from 'node:os';
import { parseBlock, type Block } from '../chain/block.js';
import { adoptTxLevels } from '../chain/merkle.js';
import type { Network } from '../chain/networks.js';
import { parseValidBlock, type Invalid } from '../chain/validate.js';
import { WorkerThread } from '../runtime/thread.js';
import type { ScanFault, ScanReply, ScanRequest, ScanWorkerData } from './scan-worker.js';
import type { SourceBlock } from './types.js';

/** The default number of scan threads: one a core, leaving one to the main thread (at least 1: no threads). */
export function defaultScanThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/**
 * A block parsed and validated (as parseValidBlock answers): the block, or why it is invalid;
 * from a scan thread, with its outputs' addresses (SourceBlock.addresses).
 */
export type Parsed = { block: Block; invalid?: undefined; addresses?: (string | null)[] } | { block?: undefined; invalid: Invalid; addresses?: undefined };

/** Blocks handed to the threads and not yet taken in order, per thread; and their bytes in all. */
const BLOCKS_PER_THREAD = 4;
const WINDOW_BYTES = 64 << 20;

interface Thread {
  worker: WorkerThread<ScanRequest, ScanReply>;
  busy: number;
}

/**
 * Threads that parse, hash and validate main-chain blocks (scan-worker.ts) while the main thread
 * applies the blocks before them: each block's bytes move to a thread and back with its txids (and
 * merkle tree), so the main thread only reads the block's fields again. Blocks are taken in
 * height order through a bounded window ({@link inOrder}), so the scan reads no further ahead than
 * that, whatever the threads' speed.
 */
export class ScanPool {
  private readonly threads: Thread[];
  /** The first thread failure, and a promise rejected with it (raced against each block's answer). */
  private failure: Error | undefined;
  private readonly failed: Promise<never>;
  private readonly waiting = new Map<number, { thread: Thread; done: (r: ScanReply) => void }>();
  private nextId = 0;

  constructor(
    private readonly net: Network,
    size: number,
    fault?: ScanFault,
  ) {
    let reject: (e: Error) => void = () => {};
    this.failed = new Promise<never>((_, r) => (reject = r));
    this.failed.catch(() => {}); // raced in inOrder: not unhandled meanwhile
    const fail = (e: Error) => {
      this.failure ??= e;
      reject(this.failure);
    };
    const data: ScanWorkerData = { kind: 'snapshot-scan', network: net.name, ...(fault && { fault }) };
    this.threads = Array.from({ length: size }, (_, i) => {
      const t: Thread = {
        worker: new WorkerThread<ScanRequest, ScanReply>(`scan thread ${i}`, import.meta.url, './scan-worker', data, {
          message: (m) => this.answer(m),
          failed: fail,
        }, { before: 'the end of the scan' }),
        busy: 0,
      };
      return t;
    });
  }

  get size(): number {
    return this.threads.length;
  }

  private answer(m: ScanReply): void {
    const w = this.waiting.get(m.id);
    if (!w) return;
    this.waiting.delete(m.id);
    w.thread.busy--;
    w.done(m);
  }

  /**
   * Hands the block to the least busy thread: its memory moves there when the block owns it (a
   * source's own copy, or a view of a buffer shared with others, is copied first).
   */
  private parse({ raw, height, own }: SourceBlock): Promise<{ raw: Buffer; parsed: Parsed }> {
    const t = this.threads.reduce((a, b) => (b.busy < a.busy ? b : a));
    const owned = own && raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : new Uint8Array(raw);
    const id = this.nextId++;
    const reply = new Promise<ScanReply>((done) => this.waiting.set(id, { thread: t, done }));
    t.busy++;
    t.worker.post({ id, raw: owned, height }, [owned.buffer as ArrayBuffer]);
    return reply.then((m) => {
      const back = Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength);
      if (m.invalid) return { raw: back, parsed: { invalid: m.invalid } };
      const nodes = Buffer.from(m.hashes!.buffer, m.hashes!.byteOffset, m.hashes!.byteLength);
      const block = parseBlock(back, { auxpow: this.net.auxpow }, 0, nodes);
      if (m.levels) adoptTxLevels(block.txs, nodes);
      return { raw: back, parsed: { block, addresses: m.addresses } };
    });
  }

  /**
   * The blocks of `blocks`, in their order, each with its bytes and parse: at most
   * {@link BLOCKS_PER_THREAD} blocks a thread and {@link WINDOW_BYTES} are handed out ahead of
   * the one taken. Throws a thread's failure.
   */
  async *inOrder(blocks: AsyncIterable<SourceBlock>): AsyncGenerator<{ sb: SourceBlock; parsed: Parsed }> {
    const it = blocks[Symbol.asyncIterator]();
    const window: { sb: SourceBlock; size: number; p: Promise<{ raw: Buffer; parsed: Parsed }> }[] = [];
    let bytes = 0;
    let ended = false;
    const room = () => window.length < BLOCKS_PER_THREAD * this.threads.length && (window.length === 0 || bytes < WINDOW_BYTES);
    try {
      for (;;) {
        while (!ended && room()) {
          const n = await it.next();
          if (n.done) ended = true;
          else {
            const sb = n.value;
            const p = this.parse(sb);
            p.catch(() => {}); // awaited in turn, or dropped with the window
            window.push({ sb, size: sb.raw.length, p });
            bytes += sb.raw.length;
          }
          if (this.failure) throw this.failure;
        }
        const first = window.shift();
        if (!first) return;
        bytes -= first.size;
        const { raw, parsed } = await Promise.race([first.p, this.failed]);
        yield { sb: { ...first.sb, raw }, parsed };
      }
    } finally {
      if (!ended) await it.return?.();
    }
  }

  /** Ends the threads: at once after a failure or with blocks still out, else once they are idle. */
  async close(): Promise<void> {
    if (this.failure || this.waiting.size > 0) await Promise.all(this.threads.map((t) => t.worker.terminate()));
    else await Promise.all(this.threads.map((t) => t.worker.close('close')));
  }
}

/** How the main chain's blocks are parsed: on how many threads, from when, and a test's fault. */
export interface ScanThreadOptions {
  /** Threads that parse, hash and validate blocks; 1 (or less): the main thread does, as it applies them. */
  threads: number;
  /** Blocks go to the threads once this many bytes of blocks were parsed on the main thread: starting threads costs more than a small chain. */
  above: number;
  fault?: ScanFault;
}

/**
 * One scan's parse of the main chain's blocks: on the main thread, then (with more than one
 * thread asked for, once `above` bytes were parsed) on a {@link ScanPool}, kept for the rest of
 * the scan. Close it once the scan ends.
 */
export class ScanParser {
  private pool: ScanPool | undefined;
  private bytes = 0;

  constructor(
    private readonly net: Network,
    private readonly opts: ScanThreadOptions,
  ) {}

  /** How many threads parse blocks (0: the main thread alone). */
  get threadCount(): number {
    return this.pool?.size ?? 0;
  }

  async *parsed(blocks: AsyncIterable<SourceBlock>): AsyncGenerator<{ sb: SourceBlock; parsed: Parsed }> {
    const it = blocks[Symbol.asyncIterator]();
    let handed = false;
    try {
      while (this.opts.threads <= 1 || this.bytes < this.opts.above) {
        const n = await it.next();
        if (n.done) return;
        const sb = n.value;
        this.bytes += sb.raw.length;
        yield { sb, parsed: parseValidBlock(sb.raw, this.net, sb.height) };
      }
      handed = true; // the pool's window closes the blocks' iterator
      this.pool ??= new ScanPool(this.net, this.opts.threads, this.opts.fault);
      yield* this.pool.inOrder({ [Symbol.asyncIterator]: () => it });
    } finally {
      if (!handed) await it.return?.();
    }
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
