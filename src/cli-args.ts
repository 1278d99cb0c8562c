/**
 * What the command modules (src/commands/) share: values checked before anything runs, one
 * clear line naming the option and the value given (yargs' own number parsing accepts '',
 * 1e2, 0x10 and turns 'abc' into NaN), and the stderr warning line.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { SITE_INFO_PATH } from './contract/layout.js';

/** A yargs command whose handler's arguments are typed from its builder's options. */
export function command<U>(module: CommandModule<object, U>): CommandModule<object, U> {
  return module;
}

/** One warning line on stderr (stdout carries the report). */
export function warn(message: string): void {
  process.stderr.write(`snapshot: warning: ${message}\n`);
}

/** A decimal whole number ≥ 0 (digits only, at most 2^53 − 1). */
export function wholeNumber(option: string, value: unknown, example: string): number {
  const text = String(value);
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new Error(`--${option} ${JSON.stringify(text)} is not a decimal whole number ≥ 0 (e.g. --${option} ${example})`);
  }
  return n;
}

/** A TCP port: 0 (any free port) to 65535. */
export function port(option: string, value: unknown): number {
  const n = /^[0-9]+$/.test(String(value)) ? Number(value) : NaN;
  if (!(n >= 0 && n <= 65535)) throw new Error(`--${option} ${JSON.stringify(String(value))} is not a port: give 0–65535 (e.g. --${option} 8080)`);
  return n;
}

/** A directory that holds a built snapshot (its `_site.json`), else a one-line error. */
export function snapshotDir(dir: string): string {
  let why: string | undefined;
  if (!existsSync(dir)) why = 'no such directory';
  else if (!statSync(dir).isDirectory()) why = 'not a directory';
  else if (!existsSync(join(dir, SITE_INFO_PATH))) why = `no ${SITE_INFO_PATH}`;
  if (why) throw new Error(`no snapshot at ${dir} (${why}); build one with: snapshot build --out ${dir}`);
  return dir;
}

/** A duration in ms: a decimal number with a unit (ms, s, m, h), or plain seconds. */
export function duration(option: string, value: unknown, example: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?$/.exec(String(value));
  if (!m) throw new Error(`--${option} ${JSON.stringify(String(value))} is not a duration: give a number with ms, s, m or h (e.g. --${option} ${example})`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * unit);
}

/** --scan-threads (build, index): a whole number ≥ 1. */
export function scanThreads(v: unknown): number {
  const n = wholeNumber('scan-threads', v, '2');
  if (n < 1) throw new Error(`--scan-threads ${n}: give at least 1 (1: the main thread parses the blocks)`);
  return n;
}
