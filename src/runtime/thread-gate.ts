/** The first failure of a set of threads, and the callers waiting for them to make progress. */
export class ThreadGate {
  failure: Error | undefined;
  private waiters: (() => void)[] = [];

  fail(e: Error): void {
    this.failure ??= e;
    this.wake();
  }

  /** Lets the waiters check their condition again. */
  wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves once `done()` holds; throws the first failure. */
  async waitUntil(done: () => boolean): Promise<void> {
    while (!done() && !this.failure) await new Promise<void>((r) => this.waiters.push(r));
    if (this.failure) throw this.failure;
  }
}
