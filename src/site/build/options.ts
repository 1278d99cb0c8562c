import type { HostName } from '../../hosts/index.js';
import type { PublishStep } from '../../publish/publish.js';
import type { Progress } from '../../runtime/progress.js';
import type { ScanFault } from '../../source/scan-worker.js';
import type { ChainSource } from '../../source/types.js';

/** The options with the source opened; `fullBecause`: a full build is needed, and why (a pack build's, site/build/pack.ts). */
export type OpenedOptions = BuildOptions & { source: ChainSource; fullBecause?: string };

/** What a user asks of a build (the CLI's options). */
export interface BuildOptions {
  /**
   * The chain, or a function that opens it: called once the targets are settled and the lock is
   * taken, so that a refused `--out` costs no work (a blocks dir's first pass reads every header);
   * the build closes a source it opened.
   */
  source: ChainSource | (() => Promise<ChainSource>);
  /** Snapshot height; the source's tip when undefined. */
  height?: number;
  outDir: string;
  /** The persistent index (default `<out>.state` beside the output). */
  stateDir?: string;
  pretty?: boolean;
  /** Addresses with more relevant outputs get the original's error document (0 = no cap). */
  maxAddressTxouts?: number;
  /** Hosts whose glue files the build writes (default: all). */
  hosts?: readonly HostName[];
  /** `host:port` of a `snapshot serve` the nginx config proxies non-canonical requests to (default: static only). */
  nginxUpstream?: string;
  /** Ignore the index and build everything. */
  full?: boolean;
  /**
   * Skip invalid blocks with a warning instead of failing: an invalid off-chain block is left
   * out; an invalid main-chain block ends the snapshot at the height below it.
   */
  skipInvalid?: boolean;
  progress?: Progress;
  /**
   * `tree` (default): `outDir` is the snapshot tree. `pack`: the tree is built in the state dir
   * and packed into `outDir` (docs/pack-format.md; see site/build/pack.ts).
   */
  format?: 'tree' | 'pack';
  /** Threads that parse, hash and validate the scanned blocks (default: the cores less one; 1: the main thread does). */
  scanThreads?: number;
  /** Replace a foreign `--out` directory, use a foreign `--state` directory (see docs/operations.md, "Safety rules"). */
  force?: boolean;
}

/** Where tests reach into a build: not options a user has. */
export interface BuildHooks {
  /** Called after the tree is written and before it is published (tests kill a build there). */
  beforePublish?: () => void | Promise<void>;
  /** Called between the steps of the publish (tests pause and kill there). */
  onPublishStep?: (step: PublishStep) => void | Promise<void>;
  /** `--format pack`: called (synchronously) before each entry the pack writer creates in `--out` (tests kill a build there). */
  onPackFile?: (name: string) => void;
  /** `--format pack`: called once the new pack.json is in place (`published`) and after the clean-up (`collected`). */
  onPackStep?: (step: 'published' | 'collected') => void | Promise<void>;
  /** Render on threads when a stage has more txs or address outputs than this (default 4096; tests use 0). */
  renderThreadsAbove?: number;
  /** Parse blocks on the scan threads once the scan has parsed more bytes of blocks than this on the main thread (default 4 MiB; tests use 0). */
  scanThreadsAbove?: number;
  /** Makes a scan thread fail at a height (tests of a crashing thread). */
  scanThreadFault?: ScanFault;
}
