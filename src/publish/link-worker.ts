/**
 * A thread that hard-links a tree (staging.ts linkTree), so that a full build makes its spare
 * release while the main thread writes the manifest. Answers the number of files linked, or
 * the error.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { linkTree } from './staging.js';

export interface LinkWorkerData {
  /** Marks a link thread. */
  kind: 'snapshot-link';
  src: string;
  dst: string;
  skip: string[];
}

export type LinkReply = { linked: number } | { error: string; code?: string };

if (parentPort && (workerData as LinkWorkerData | undefined)?.kind === 'snapshot-link') {
  const { src, dst, skip } = workerData as LinkWorkerData;
  let reply: LinkReply;
  try {
    reply = { linked: linkTree(src, dst, new Set(skip)) };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    reply = { error: String(err?.message ?? e), code: err?.code };
  }
  parentPort.postMessage(reply);
}
