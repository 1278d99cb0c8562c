/**
 * The CLI commands and flags the example manifests and scripts (examples/) may use, and a parser
 * that checks one of their command lines against them. The stage commands (index, merge, build
 * --shard/--shards) are the agreed surface of the staged build; test/examples.test.ts also
 * checks this table against the real CLI's `--help`, so it cannot drift from the CLI.
 */
import { spawnSync } from 'node:child_process';
import { NETWORKS } from '../../src/chain/networks.js';

type FlagKind = 'value' | 'boolean' | 'list';

interface CommandSurface {
  flags: Record<string, FlagKind>;
  /** Positional arguments: merge's shard directories. */
  positional: boolean;
}

const SOURCE_FLAGS = { source: 'value', network: 'value', height: 'value' } as const;

export const SURFACE: Record<string, CommandSurface> = {
  index: { positional: false, flags: { ...SOURCE_FLAGS, state: 'value', full: 'boolean', 'skip-invalid': 'boolean' } },
  build: {
    positional: false,
    flags: {
      ...SOURCE_FLAGS,
      state: 'value',
      out: 'value',
      format: 'value',
      shard: 'value',
      shards: 'value',
      pretty: 'boolean',
      full: 'boolean',
      force: 'boolean',
      'skip-invalid': 'boolean',
      'max-address-txouts': 'value',
      'rpc-cookie': 'value',
      'rpc-wait': 'value',
      hosts: 'list',
      'nginx-upstream': 'value',
    },
  },
  merge: { positional: true, flags: { out: 'value' } },
  verify: { positional: false, flags: { dir: 'value', verbose: 'boolean' } },
  serve: { positional: false, flags: { dir: 'value', port: 'value', host: 'value' } },
  publish: {
    positional: false,
    flags: { dir: 'value', to: 'value', endpoint: 'value', region: 'value', concurrency: 'value', 'max-attempts': 'value', 'dry-run': 'boolean', force: 'boolean' },
  },
};

/** One `snapshot` command line, parsed. */
export interface SnapshotCommand {
  command: string;
  flags: Map<string, string | true>;
  positional: string[];
}

/**
 * Parses `argv` (the words after `snapshot`) against {@link SURFACE}; throws an error naming
 * `where` and what is wrong: an unknown command or flag, a flag without its value, a flag given
 * twice, a value outside its choices, or a combination the command refuses.
 */
export function parseSnapshotArgs(argv: readonly string[], where: string): SnapshotCommand {
  const fail = (msg: string): never => {
    throw new Error(`${where}: snapshot ${argv.join(' ')}: ${msg}`);
  };
  const [command, ...rest] = argv;
  const surface = command !== undefined ? SURFACE[command] : undefined;
  if (!surface) return fail(`unknown command ${JSON.stringify(command)} (known: ${Object.keys(SURFACE).join(', ')})`);
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.startsWith('--')) {
      if (!surface.positional) fail(`unexpected argument ${JSON.stringify(word)}`);
      positional.push(word);
      continue;
    }
    const eq = word.indexOf('=');
    const name = eq === -1 ? word.slice(2) : word.slice(2, eq);
    const kind = surface.flags[name];
    if (!kind) fail(`unknown flag --${name} for ${command}`);
    if (flags.has(name)) fail(`--${name} given twice`);
    if (kind === 'boolean') {
      if (eq !== -1) fail(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    const value = eq !== -1 ? word.slice(eq + 1) : rest[++i];
    if (value === undefined || value.startsWith('--')) fail(`--${name} needs a value`);
    flags.set(name, value!);
  }
  const parsed = { command: command!, flags, positional };
  checkValues(parsed, fail);
  return parsed;
}

/** The rules of the agreed surface that a flag table alone does not say. */
function checkValues({ command, flags, positional }: SnapshotCommand, fail: (msg: string) => never): void {
  const get = (f: string) => flags.get(f) as string | undefined;
  const source = get('source');
  if (source !== undefined && !/^(blocks|rpc):./.test(source)) fail(`--source ${source}: not blocks:<dir> or rpc:<url>`);
  const network = get('network');
  if (network !== undefined && !(network in NETWORKS)) fail(`--network ${network}: not one of ${Object.keys(NETWORKS).join(', ')}`);
  const format = get('format');
  if (format !== undefined && format !== 'tree' && format !== 'pack') fail(`--format ${format}: not tree or pack`);
  if (command === 'index' && !flags.has('state')) fail('index needs --state');
  if (command === 'merge' && (!flags.has('out') || positional.length === 0)) fail('merge needs --out and at least one shard directory');
  if (command === 'publish' && !flags.has('to')) fail('publish needs --to');
  if (command !== 'build') return;
  const shard = get('shard');
  const shards = get('shards');
  if (shard === undefined) {
    if (shards !== undefined) fail('--shards without --shard auto');
    return;
  }
  if (!flags.has('state') || !flags.has('out')) fail('a shard build needs --state (the index) and --out');
  if (shard === 'auto') {
    if (shards === undefined || !/^[1-9]\d*$/.test(shards)) fail('--shard auto needs --shards <N> (N ≥ 1)');
    return;
  }
  if (shards !== undefined) fail(`--shards goes with --shard auto, not --shard ${shard}`);
  const m = /^(\d+)\/([1-9]\d*)$/.exec(shard);
  if (!m || Number(m[1]) >= Number(m[2])) fail(`--shard ${shard}: not i/N with 0 ≤ i < N`);
}

/** The shard count of a shard build: --shards, or the N of --shard i/N. */
export function shardCount(c: SnapshotCommand): number | undefined {
  const n = c.flags.get('shards') ?? (typeof c.flags.get('shard') === 'string' ? (c.flags.get('shard') as string).split('/')[1] : undefined);
  return typeof n === 'string' ? Number(n) : undefined;
}

/**
 * The `snapshot …` command lines of a shell script (a line whose first word is `snapshot`, with
 * its `\` continuations), each split into words the way bash does it: bash itself expands them,
 * with `env` as the only variables (a variable the line uses and `env` lacks is an error) and the
 * script's plain `name=value` assignments made first.
 */
export function shellSnapshotCommands(script: string, env: Record<string, string>): { line: number; argv: string[] }[] {
  const key = JSON.stringify([script, env]);
  const known = expansions.get(key);
  if (known) return structuredClone(known);
  const result = expand(script, env);
  expansions.set(key, result);
  return structuredClone(result);
}

// Expansions are pure: one bash per script and set of variables.
const expansions = new Map<string, { line: number; argv: string[] }[]>();

function expand(script: string, env: Record<string, string>): { line: number; argv: string[] }[] {
  // Logical lines (continuations joined), each with the number of its first physical line.
  const lines: { line: number; text: string }[] = [];
  let pending: { line: number; text: string } | undefined;
  for (const [i, raw] of script.split('\n').entries()) {
    const cur: { line: number; text: string } = pending ?? { line: i + 1, text: '' };
    cur.text += raw.endsWith('\\') ? `${raw.slice(0, -1)} ` : raw;
    pending = raw.endsWith('\\') ? cur : undefined;
    if (!pending) lines.push(cur);
  }
  const assignments = lines.map((l) => l.text).filter((t) => /^\s*[A-Za-z_]\w*=\S+\s*$/.test(t));
  const commands = lines.flatMap(({ line, text }) => {
    const m = /^\s*snapshot\s+(.*)$/.exec(text);
    return m ? [{ line, words: m[1]! }] : [];
  });
  // One bash for the whole script: each word ends in NUL, each command in the word "\x01".
  const body = ['set -eu', ...assignments, ...commands.map((c) => `printf '%s\\0' ${c.words}; printf '\\1\\0'`)].join('\n');
  const r = spawnSync('bash', ['-c', body], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, encoding: 'utf8' });
  const expanded: string[][] = [[]];
  for (const w of r.stdout.split('\0').slice(0, -1)) {
    if (w === '\x01') expanded.push([]);
    else expanded.at(-1)!.push(w);
  }
  expanded.pop();
  if (r.status !== 0 || expanded.length !== commands.length) {
    const failed = commands[expanded.length];
    throw new Error(`line ${failed?.line}: bash could not expand ${JSON.stringify(failed?.words)}: ${r.stderr.trim()}`);
  }
  return commands.map((c, i) => ({ line: c.line, argv: expanded[i]! }));
}
