/**
 * What a build closes or removes at its end, whatever happened: each phase adds what it opened
 * or made, and `run` undoes them newest first (threads before the trees they write, the index
 * last). After a failure, a cleanup's own error (a full disk can fail these too) must not hide
 * the failure; otherwise the first one is thrown once every step ran. Steps added under a tag
 * can be run earlier with `release`, once their work is done (the pack phase needs neither the
 * render threads nor the index, and should not hold their memory).
 */
export type TeardownTag = 'threads' | 'index';

export class Teardown {
  private steps: { step: () => unknown; tag?: TeardownTag }[] = [];

  add(step: () => unknown, tag?: TeardownTag): void {
    this.steps.push({ step, tag });
  }

  /** Runs the steps added under `tag` now, newest first; `run` no longer runs them. */
  async release(tag: TeardownTag): Promise<void> {
    const now = this.steps.filter((s) => s.tag === tag);
    this.steps = this.steps.filter((s) => s.tag !== tag);
    for (const { step } of now.reverse()) await step();
  }

  async run(failed: boolean): Promise<void> {
    let error: { e: unknown } | undefined;
    for (const { step } of this.steps.reverse()) {
      try {
        await step();
      } catch (e) {
        if (!failed) error ??= { e };
      }
    }
    if (error) throw error.e;
  }
}
