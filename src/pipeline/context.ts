import type { ChainIndex } from '../index/query.js';
import type { IndexMeta } from '../index/state.js';
import type { Changes } from '../index/sync.js';
import type { Progress } from '../runtime/progress.js';
import type { SiteWriter } from '../publish/site-writer.js';
import type { RenderPool } from './render-pool.js';

/** What every render stage of a build works with. */
export interface StageContext {
  index: ChainIndex;
  writer: SiteWriter;
  /** The snapshot height. */
  height: number;
  pretty: boolean;
  /** Addresses with more outputs get the capped document (0 = no cap). */
  cap: number;
  progress: Progress;
  meta: IndexMeta;
  /** The render threads (txs, blocks, addresses) and the tx texts they share. */
  pool: RenderPool;
  /** undefined for a full build. */
  changes: Changes | undefined;
}
