/**
 * What a build closes or removes at its end, whatever happened: each phase adds what it opened
 * or made, and `run` undoes them newest first (threads before the trees they write, the index
 * last). After a failure, a cleanup's own error (a full disk can fail these too) must not hide
 * the failure; otherwise the first one is thrown once every step ran.
 */
export class Teardown {
  private readonly steps: (() => unknown)[] = [];

  add(step: () => unknown): void {
    this.steps.push(step);
  }

  async run(failed: boolean): Promise<void> {
    let error: { e: unknown } | undefined;
    for (const step of this.steps.reverse()) {
      try {
        await step();
      } catch (e) {
        if (!failed) error ??= { e };
      }
    }
    if (error) throw error.e;
  }
}
