/**
 * The worker-thread lifecycle the index write thread, the render threads and the writer threads
 * share (src/runtime/thread.ts): started from a module beside the caller (here a TypeScript
 * fixture, bundled from the sources), its failures named after it and reported once, closed by
 * a message or terminated.
 */
import { describe, expect, it } from 'vitest';
import { WorkerThread } from '../src/runtime/thread.js';

function start(name: string) {
  const failures: Error[] = [];
  const messages: string[] = [];
  const exits: number[] = [];
  let answered: () => void = () => undefined;
  const thread = new WorkerThread<string, string>(name, import.meta.url, './fixtures/thread-child', {}, {
    message: (m) => {
      messages.push(m);
      answered();
    },
    failed: (e) => failures.push(e),
    exited: (code) => exits.push(code),
  }, { before: 'the test ended' });
  const ask = (m: string) => new Promise<void>((resolve) => ((answered = resolve), thread.post(m)));
  const exit = () => new Promise<void>((resolve) => { const t = setInterval(() => thread.exited && (clearInterval(t), resolve()), 5); });
  return { thread, failures, messages, exits, ask, exit };
}

describe('WorkerThread', () => {
  it('answers messages, and closing by message ends it without a failure', async () => {
    const t = start('echo thread');
    await t.ask('a');
    await t.ask('b');
    expect(t.messages).toEqual(['echo a', 'echo b']);
    await t.thread.close('close');
    expect(t.thread.exited).toBe(true);
    expect(t.exits).toEqual([0]);
    expect(t.failures).toEqual([]);
  });

  it('an error the thread does not catch is reported once, named after the thread, with its code', async () => {
    const t = start('render thread 7');
    t.thread.post('throw');
    await t.exit();
    expect(t.failures).toHaveLength(1); // not a second time for the exit that follows
    expect(t.failures[0]!.message).toBe('render thread 7: planted failure');
    expect((t.failures[0] as { code?: string }).code).toBe('EPLANTED');
    expect((t.failures[0]!.cause as Error).message).toBe('planted failure');
    await t.thread.close('close'); // already gone: returns
  });

  it('exiting before it was closed is a failure naming the thread and the exit code', async () => {
    const t = start('writer thread 1');
    t.thread.post('exit');
    await t.exit();
    expect(t.exits).toEqual([3]);
    expect(t.failures.map((e) => e.message)).toEqual(['writer thread 1 exited (code 3) before the test ended']);
  });

  it('terminating it is not a failure', async () => {
    const t = start('index write thread');
    await t.ask('x');
    await t.thread.terminate();
    expect(t.thread.exited).toBe(true);
    expect(t.exits).toHaveLength(1);
    expect(t.failures).toEqual([]);
  });
});
