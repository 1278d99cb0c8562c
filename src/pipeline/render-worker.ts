/**
 * A render thread (render-pool.ts): it opens the index (the same LMDB environment, only read)
 * and the block spill, renders the documents of each task (heights: their blocks and txs;
 * addresses: their documents), writes them below the staging root itself, keeps their manifest
 * rows (manifest-rows.ts) and answers their write status (and paths, in an update). The
 * tx texts it renders go to its own scratch file for the address documents (tx-text-store.ts).
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { getNetwork } from '../chain/networks.js';
import { addressPath, isTxRawPath } from '../contract/layout.js';
import { shardOfPath, type ShardSpec } from '../contract/shard.js';
import { BlocksSpill } from '../index/blocks-spill.js';
import { ChainIndex } from '../index/query.js';
import { openStore } from '../index/store.js';
import { hashParts, readIfAny } from '../publish/hashed-files.js';
import { listFile, listHashed, updateTarget, writeFile, WRITTEN, type UpdateOf, type UpdateTarget, type WorkerReply } from '../publish/site-writer-worker.js';
import { HintWriter } from '../pack/hints.js';
import { answerBytes, PackReader } from '../pack/reader.js';
import { ManifestRows } from '../publish/manifest-rows.js';
import { renderHeight, type BlockDocumentCounts, type PartsHint } from './block-files.js';
import { addressDocument, changedPredicates, noReuse, type AddressReuse, type AddressReuseCounts, type ChangedTxs } from './address-document.js';
import { TxTexts } from './tx-text-cache.js';
import { TxTextAppender, TxTextReader, type TxTextEntries, type TxTextTable } from './tx-text-store.js';

export interface RenderWorkerData {
  /** Marks a render thread. */
  kind: 'snapshot-render';
  stateDir: string;
  spill: string;
  network: string;
  pretty: boolean;
  root: string;
  /** Absent: a fresh tree; else the published tree it follows (site-writer-worker.ts UpdateOf). */
  update?: UpdateOf;
  /** This thread's tx text scratch file. */
  textFile: string;
  /** A pack build: where this thread keeps the recipe hints of the compact address documents it writes (src/pack/hints.ts). */
  hintsFile?: string;
  /** Txids that occur more than once in the chain: their files are left to the main thread. */
  duplicates: string[];
  /** Where its manifest rows go, and the name of its runs. */
  rowsDir: string;
  rowsName: string;
  /** The `.bin` and `.hex` files were written during the scan (a full build): write only the documents. */
  rawWritten: boolean;
  /** The txs' `.bin` and `.hex` files are listed in the manifest, not written (site-writer-worker.ts LISTED). */
  listTxRaw?: boolean;
  /**
   * The compact address documents are listed in the manifest, not written, each made by the pack
   * phase from its recipe hint (`hintsFile`): a fresh pack build's private tree (site/build/pack.ts listsAddresses).
   */
  listAddresses?: boolean;
  /** A shard build: only this shard's files are written, and the index is opened read-only (many shards read it at once). */
  shard?: ShardSpec;
  /**
   * An incremental pack build whose pack in `--out` was made from the published private tree:
   * that pack's directory. An address document the tree lists without holding it (listAddresses)
   * has its previous version there, to splice from.
   */
  previousPack?: string;
}

export type RenderTask =
  | { kind: 'heights'; heights: number[]; only: (number[] | null)[]; tip: number }
  | { kind: 'addresses'; addresses: string[] }
  /** Before the first addresses task; `changed`: an incremental build's changed txs (address documents reuse their previous bytes). */
  | { kind: 'texts'; table: TxTextTable; changed?: ChangedTxs }
  /** After the last task: write out the last manifest rows (the answer's `sealed`). */
  | { kind: 'seal' };

/** What the pool posts to a render thread: a task (answered with its id), or 'close' to end it. */
export type RenderRequest = { id: number; task: RenderTask } | 'close';

/** The answer to a task: WorkerReply's fields for the task's files, in task order. */
export interface RenderReply extends WorkerReply {
  id: number;
  /** In an update, the task's files (their status says which changed). */
  paths?: string[];
  /** Heights tasks: the tx texts appended, and the [height, txIndex] of the duplicate txids left out. */
  texts?: TxTextEntries;
  skipped?: number[];
  /** Heights tasks: how their block documents were made (rendered, spliced, fallback). */
  blockDocuments?: BlockDocumentCounts;
  /** Addresses tasks of an incremental build: what was reused from the previous documents. */
  reuse?: AddressReuseCounts;
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
  private reuseOf: Pick<AddressReuse, 'changed' | 'added'> | undefined;
  private readonly dirs = new Set<string>();
  private readonly rows: ManifestRows;
  private readonly update: UpdateTarget | undefined;
  private hints: HintWriter | undefined;
  /** The pack previous address documents are read from (previousAddress), once opened. */
  private pack: Promise<PackReader> | undefined;

  constructor(
    private readonly index: ChainIndex,
    private readonly d: Omit<RenderWorkerData, 'kind' | 'stateDir' | 'spill' | 'network'>,
  ) {
    this.dups = new Set(d.duplicates);
    this.rows = new ManifestRows(d.rowsDir, d.rowsName);
    this.update = updateTarget(d.update);
  }

  /**
   * The previous version of an address document: the published tree's file (`file`), else (the
   * tree lists it without holding it) its answer in the pack made from that tree; undefined when
   * neither has it, or the pack cannot give it (the document is then made whole).
   */
  private async previousAddress(rel: string): Promise<{ bytes: Buffer; file: boolean } | undefined> {
    const { previousPack } = this.d;
    const file = this.published(rel);
    if (file || previousPack === undefined) return file && { bytes: file, file: true };
    try {
      // Decoded tx documents kept (32 MiB a thread): one recurs in the documents of its payer and
      // payees, which a run changes together (without them this costs more than making the documents whole).
      this.pack ??= PackReader.open(previousPack, { syncReads: true, slotCache: 256, decodedCache: 32 << 20 });
      const answer = await (await this.pack).get(rel);
      return answer && { bytes: Buffer.from(await answerBytes(answer)), file: false };
    } catch {
      return undefined;
    }
  }

  /** The published version of a document, if any (the staging tree may hold an older copy there, UpdateOf). */
  private published(rel: string): Buffer | undefined {
    return this.d.update ? readIfAny(join(this.d.update.published, rel)) : undefined;
  }

  async run(id: number, task: RenderTask): Promise<[RenderReply, ArrayBuffer[]] | undefined> {
    const { index, d } = this;
    if (task.kind === 'seal') {
      try {
        this.hints?.close();
        this.hints = undefined;
        return [{ id, sealed: this.rows.seal() }, []];
      } catch (e) {
        const err = e as NodeJS.ErrnoException | undefined;
        return [{ id, error: String(err?.message ?? e), code: err?.code, path: d.rowsDir }, []];
      }
    }
    if (task.kind === 'texts') {
      this.reader = new TxTextReader(task.table);
      this.texts = new TxTexts(index, d.pretty, this.reader, d.hintsFile !== undefined && !d.pretty);
      // Compact documents of an incremental build: the published tree holds the previous version.
      this.reuseOf = task.changed && !d.pretty && d.update ? changedPredicates(task.changed) : undefined;
      return undefined;
    }
    const paths: string[] = [];
    const status: number[] = [];
    const at = { path: '' };
    let what = '';
    /** The task's answer for a file: its status, and its path in an update. */
    const answer = (rel: string, s: number) => {
      if (d.update) paths.push(rel);
      status.push(s);
      at.path = '';
      return s;
    };
    /** Writes a file of this thread's shard: its status, or undefined (another shard's). */
    const file = (rel: string, data: string | Uint8Array | Iterable<Uint8Array>, old?: Buffer | null): number | undefined => {
      if (d.shard && shardOfPath(rel, d.shard.count) !== d.shard.index) return undefined;
      const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      return answer(rel, d.listTxRaw && b instanceof Uint8Array && isTxRawPath(rel) ? listFile(d.root, this.update, this.dirs, rel, b, this.rows, at) : writeFile(d.root, this.update, this.dirs, rel, b, this.rows, at, old));
    };
    /**
     * Writes an assembled document (`parts()` makes it), with its recipe hint in a pack build
     * (compact documents only). With `list` (RenderWorkerData.listAddresses) it is listed, not
     * written, when its hint is kept and names no duplicate txid's document (whose text may be
     * another occurrence's than the /tx document the pack holds): the pack phase makes it from the
     * hint alone. Otherwise it is made again and written, for the pack phase to read if it must.
     */
    const hinted = (rel: string, parts: () => Iterable<Uint8Array>, hint: PartsHint, old?: Buffer | null, list = false) => {
      const hints = d.hintsFile && !d.pretty ? (this.hints ??= new HintWriter(d.hintsFile)) : undefined;
      if (hints && list) {
        let duplicate = false;
        const txOf = (p: Uint8Array) => {
          const t = hint.txOf(p);
          if (t && this.dups.has(t.txid)) duplicate = true;
          return t;
        };
        const hashed = hashParts(hints.recording(rel, parts(), txOf, hint.previous));
        if (!duplicate && hints.keep()) return void answer(rel, listHashed(d.root, this.update, this.dirs, rel, hashed, this.rows, at));
      }
      if (file(rel, hints ? hints.recording(rel, parts(), hint.txOf, hint.previous) : parts(), old) === WRITTEN) hints?.keep();
    };
    const skipped: number[] = [];
    const blockDocuments: BlockDocumentCounts = { rendered: 0, spliced: 0, fallback: 0 };
    let reuse: AddressReuse | undefined;
    const previous = (rel: string) => this.published(rel);
    try {
      if (task.kind === 'heights') {
        const appender = (this.appender ??= new TxTextAppender(d.textFile));
        task.heights.forEach((h, i) => {
          what = `height ${h}`;
          renderHeight(index, h, task.tip, d.pretty, task.only[i] ?? undefined, {
            file: (rel, data, hint) => {
              if (hint && Array.isArray(data)) hinted(rel, () => data, hint);
              else file(rel, data);
            },
            tx: (txid, text, ti) => {
              if (this.dups.has(txid)) return !skipped.push(h, ti);
              appender.append(txid, text);
              return true;
            },
            previous,
            block: (kind) => void blockDocuments[kind]++,
            raw: !d.rawWritten,
          });
        });
      } else {
        if (this.reuseOf) reuse = { previous: undefined, ...this.reuseOf, counts: noReuse() };
        for (const a of task.addresses) {
          what = `address ${a}`;
          const rel = addressPath(a);
          const was = reuse ? await this.previousAddress(rel) : undefined;
          const before = was?.bytes;
          if (reuse) reuse.previous = before;
          const texts = this.texts!;
          // Its tx texts, and the entries a spliced one copies from its previous version. One whose
          // previous version came from the pack is written even if unchanged: there is no published file to keep.
          hinted(rel, () => addressDocument(index, texts, a, d.pretty, reuse), { txOf: (p) => texts.txOf(p), previous: before }, reuse ? (was?.file ? was.bytes : null) : undefined, d.listAddresses);
        }
      }
      const reply: RenderReply = {
        id,
        paths: d.update ? paths : undefined,
        status: Uint8Array.from(status),
        texts: this.appender?.take(),
        skipped,
        blockDocuments,
        reuse: reuse?.counts,
      };
      return [reply, [reply.status!.buffer as ArrayBuffer]];
    } catch (e) {
      const err = e as NodeJS.ErrnoException | undefined;
      // A failure while writing has an errno code; one without is rendering's (an address document is made as it is written).
      const rendering = at.path === '' || err?.code === undefined;
      return [{ id, error: String(err?.message ?? e), code: err?.code, path: rendering ? what : at.path, rendering }, []];
    }
  }

  async close(): Promise<void> {
    this.appender?.close();
    this.reader?.close();
    this.hints?.close(); // open only when the build ends before its seal
    this.hints = undefined;
    await (await this.pack?.catch(() => undefined))?.close();
  }
}

if (parentPort && (workerData as RenderWorkerData | undefined)?.kind === 'snapshot-render') {
  const port = parentPort;
  const data = workerData as RenderWorkerData;
  const readOnly = data.shard !== undefined;
  const blocks = new BlocksSpill(data.spill, readOnly);
  const renderer = new Renderer(new ChainIndex(openStore(data.stateDir, { readOnly }), blocks, getNetwork(data.network)), data);
  // One message at a time, in order: a task may wait on a read of the previous pack.
  let queue = Promise.resolve();
  port.on('message', (m: RenderRequest) => {
    queue = queue.then(async () => {
      if (m === 'close') {
        blocks.close();
        await renderer.close();
        port.close();
        return;
      }
      const answer = await renderer.run(m.id, m.task);
      if (answer) port.postMessage(answer[0], answer[1]);
    }).catch((e: unknown) => {
      // Not a task's failure (those are answered): the thread ends with it, as a synchronous throw would.
      setImmediate(() => {
        throw e;
      });
    });
  });
}
