import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Paths beside `out` used by a build of process `pid`. */
export function buildPaths(outDir: string, pid = process.pid) {
  return {
    staging: `${outDir}.tmp-${pid}`,
    work: `${outDir}.work-${pid}`,
    old: `${outDir}.old-${pid}`,
  };
}

/**
 * Clears what a killed build left beside `out`: staging and work dirs of dead
 * processes are removed, and a previous tree moved aside just before a crash
 * is put back.
 */
export function recoverInterrupted(outDir: string): void {
  const parent = dirname(outDir);
  const base = basename(outDir);
  if (!existsSync(parent)) return;
  for (const entry of readdirSync(parent)) {
    const m = entry.startsWith(base + '.') ? /^\.(tmp|work|old)-(\d+)$/.exec(entry.slice(base.length)) : null;
    if (!m || pidAlive(Number(m[2]))) continue;
    const path = join(parent, entry);
    if (m[1] === 'old' && !existsSync(outDir)) renameSync(path, outDir);
    else rmSync(path, { recursive: true, force: true });
  }
}

/** Replaces `out` by the finished staging tree; the old tree is removed only after the swap. */
export function publish(staging: string, outDir: string, pid = process.pid): void {
  const { old } = buildPaths(outDir, pid);
  const hadOld = existsSync(outDir);
  if (hadOld) renameSync(outDir, old);
  renameSync(staging, outDir);
  if (hadOld) rmSync(old, { recursive: true, force: true });
}
