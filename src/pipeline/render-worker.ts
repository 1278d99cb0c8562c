/**
 * A render thread (render-pool.ts): it opens the index (the same LMDB environment, only read)
 * and the block spill, renders the documents of each task (heights: their blocks and txs;
 * addresses: their documents), writes them below the staging root itself and answers their
 * paths, sizes, sha256 and write status, which the main thread records in the manifest. The
 * tx texts it renders go to its own scratch file for the address documents (tx-text-store.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getNetwork } from '../chain/networks.js';
import { addressPath } from '../contract/layout.js';
import { BlocksSpill } from '../index/blocks-spill.js';
import { ChainIndex } from '../index/query.js';
import { openStore } from '../index/store.js';
import { writeFile, type WorkerReply, type WriteMode } from '../publish/writer-worker.js';
import { addressDocument } from './address-document.js';
import { renderHeight } from './blocks.js';
import { TxTexts } from './tx-texts.js';
import { TxTextAppender, TxTextReader, type TxTextEntries, type TxTextTable } from './tx-text-store.js';

export interface RenderWorkerData {
  /** Marks a render thread. */
  kind: 'snapshot-render';
  stateDir: string;
  spill: string;
  network: string;
  pretty: boolean;
  root: string;
  mode: WriteMode;
  /** This thread's tx text scratch file. */
  textFile: string;
  /** Txids that occur more than once in the chain: their files are left to the main thread. */
  duplicates: string[];
}

export type RenderTask =
  | { kind: 'heights'; heights: number[]; only: (number[] | null)[]; tip: number }
  | { kind: 'addresses'; addresses: string[] }
  | { kind: 'texts'; table: TxTextTable };

/** The answer to a task: WorkerReply's fields for the task's files, in task order. */
export interface RenderReply extends WorkerReply {
  id: number;
  paths?: string[];
  sizes?: Int32Array;
  /** Heights tasks: the tx texts appended, and the [height, txIndex] of the duplicate txids left out. */
  texts?: TxTextEntries;
  skipped?: number[];
  /** Set when the failure was not writing a file (`path` then names what was being rendered). */
  rendering?: boolean;
}

/**
 * What a render thread does, task by task (also run on the main thread for small builds, see
 * render-pool.ts): the answer of each task, with the buffers to transfer.
 */
export class Renderer {
  private readonly dups: Set<string>;
  private appender: TxTextAppender | undefined;
  private reader: TxTextReader | undefined;
  private texts: TxTexts | undefined;
  private readonly dirs = new Set<string>();

  constructor(
    private readonly index: ChainIndex,
    private readonly d: Omit<RenderWorkerData, 'kind' | 'stateDir' | 'spill' | 'network'>,
  ) {
    this.dups = new Set(d.duplicates);
  }

  run(id: number, task: RenderTask): [RenderReply, ArrayBuffer[]] | undefined {
    const { index, d } = this;
    if (task.kind === 'texts') {
      this.reader = new TxTextReader(task.table);
      this.texts = new TxTexts(index, d.pretty, this.reader);
      return undefined;
    }
    const paths: string[] = [];
    const sizes: number[] = [];
    const status: number[] = [];
    let digests = Buffer.alloc(64 * 32);
    let bytes = 0;
    const at = { path: '' };
    let what = '';
    const file = (rel: string, data: string | Uint8Array | Uint8Array[]) => {
      const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      const size = b instanceof Uint8Array ? b.length : b.reduce((n, p) => n + p.length, 0);
      const i = paths.length;
      if ((i + 1) * 32 > digests.length) {
        const more = Buffer.alloc(digests.length * 2); // not from the pool: its buffer is transferred
        digests.copy(more);
        digests = more;
      }
      paths.push(rel);
      sizes.push(size);
      bytes += size;
      status.push(writeFile(d.root, d.mode === 'update', this.dirs, rel, b, digests, i * 32, at));
      at.path = '';
    };
    const skipped: number[] = [];
    try {
      if (task.kind === 'heights') {
        const appender = (this.appender ??= new TxTextAppender(d.textFile));
        task.heights.forEach((h, i) => {
          what = `height ${h}`;
          renderHeight(index, h, task.tip, d.pretty, task.only[i] ?? undefined, {
            file,
            tx: (txid, text, ti) => {
              if (this.dups.has(txid)) return !skipped.push(h, ti);
              appender.append(txid, text);
              return true;
            },
          });
        });
      } else {
        for (const a of task.addresses) {
          what = `address ${a}`;
          file(addressPath(a), addressDocument(index, this.texts!, a, d.pretty));
        }
      }
      const reply: RenderReply = {
        id,
        paths,
        sizes: Int32Array.from(sizes),
        status: Uint8Array.from(status),
        digests: digests.subarray(0, paths.length * 32),
        bytes,
        texts: this.appender?.take(),
        skipped,
      };
      return [reply, [reply.sizes!.buffer as ArrayBuffer, reply.status!.buffer as ArrayBuffer, digests.buffer as ArrayBuffer]];
    } catch (e) {
      const err = e as NodeJS.ErrnoException | undefined;
      const rendering = at.path === '';
      return [{ id, error: String(err?.message ?? e), code: err?.code, path: rendering ? what : at.path, rendering }, []];
    }
  }

  close(): void {
    this.appender?.close();
    this.reader?.close();
  }
}

if (parentPort && (workerData as RenderWorkerData | undefined)?.kind === 'snapshot-render') {
  const port = parentPort;
  const data = workerData as RenderWorkerData;
  const blocks = new BlocksSpill(data.spill);
  const renderer = new Renderer(new ChainIndex(openStore(data.stateDir), blocks, getNetwork(data.network)), data);
  port.on('message', (m: { id: number; task: RenderTask } | 'close') => {
    if (m === 'close') {
      blocks.close();
      renderer.close();
      port.close();
      return;
    }
    const answer = renderer.run(m.id, m.task);
    if (answer) port.postMessage(answer[0], answer[1]);
  });
}
