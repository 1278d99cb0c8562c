/**
 * A render thread of the address stage (address-pool.ts): it opens the index (the same LMDB
 * environment, only read) and the block spill, and for each task of addresses renders their
 * documents, writes them below the staging root and answers their sizes, sha256 and write
 * status, which the main thread records in the manifest. Its tx texts: see tx-texts.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getNetwork } from '../chain/networks.js';
import { addressPath } from '../contract/layout.js';
import { BlocksSpill } from '../index/blocks-spill.js';
import { ChainIndex } from '../index/query.js';
import { openStore } from '../index/store.js';
import { writeFile, type WorkerReply, type WriteMode } from '../publish/writer-worker.js';
import { addressDocument } from './address-document.js';
import { TxTexts } from './tx-texts.js';
import { TxTextReader, type TxTextTable } from './tx-text-store.js';

export interface AddressWorkerData {
  /** Marks an address render thread. */
  kind: 'snapshot-address-render';
  stateDir: string;
  spill: string;
  network: string;
  pretty: boolean;
  root: string;
  mode: WriteMode;
  /** The texts the txs stage rendered. */
  texts: TxTextTable;
}

export interface AddressTask {
  id: number;
  addresses: string[];
}

/** The answer to a task: WorkerReply's fields for the task's files, in task order. */
export interface AddressReply extends WorkerReply {
  id: number;
  sizes?: Int32Array;
  /** Set when the failure was not writing a file (`path` is then the address). */
  rendering?: boolean;
}

if (parentPort && (workerData as AddressWorkerData | undefined)?.kind === 'snapshot-address-render') {
  const port = parentPort;
  const { stateDir, spill, network, pretty, root, mode, texts: table } = workerData as AddressWorkerData;
  const store = openStore(stateDir);
  const blocks = new BlocksSpill(spill);
  const index = new ChainIndex(store, blocks, getNetwork(network));
  const stored = new TxTextReader(table);
  const texts = new TxTexts(index, pretty, stored);
  const dirs = new Set<string>();
  port.on('message', (task: AddressTask | 'close') => {
    if (task === 'close') {
      blocks.close();
      stored.close();
      port.close();
      return;
    }
    const n = task.addresses.length;
    const digests = Buffer.alloc(n * 32);
    const status = new Uint8Array(n);
    const sizes = new Int32Array(n);
    let bytes = 0;
    const at = { path: '' };
    let address = '';
    try {
      task.addresses.forEach((a, i) => {
        address = a;
        at.path = '';
        const doc = addressDocument(index, texts, a, pretty);
        sizes[i] = doc.length;
        bytes += doc.length;
        status[i] = writeFile(root, mode === 'update', dirs, addressPath(a), doc, digests, i * 32, at);
      });
      const reply: AddressReply = { id: task.id, digests, status, sizes, bytes };
      port.postMessage(reply, [digests.buffer as ArrayBuffer, status.buffer, sizes.buffer]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException | undefined;
      const rendering = at.path === '';
      port.postMessage({ id: task.id, error: String(err?.message ?? e), code: err?.code, path: rendering ? address : at.path, rendering } satisfies AddressReply);
    }
  });
}
