/** Progress of a long build: a live line on a TTY, a plain line every few seconds otherwise. */
export class Progress {
  private stage = '';
  private started = 0;
  private lastPrint = 0;
  readonly stageTimes: [string, number][] = [];

  /** `out` null: silent (stage times are still kept). */
  constructor(
    private readonly out: NodeJS.WriteStream | null = process.stderr,
    private readonly tty = Boolean(out?.isTTY),
  ) {}

  begin(stage: string): void {
    this.end();
    this.stage = stage;
    this.started = Date.now();
    this.lastPrint = 0;
  }

  end(): void {
    if (!this.stage) return;
    this.stageTimes.push([this.stage, (Date.now() - this.started) / 1000]);
    if (this.tty) this.out?.write('\n');
    this.stage = '';
  }

  /** A one-off line (e.g. why a build is full). */
  note(line: string): void {
    if (this.tty) this.out?.write(`\r\x1b[K${line}\n`);
    else this.out?.write(line + '\n');
  }

  update(done: number, total: number, unit: string): void {
    if (!this.out) return;
    const now = Date.now();
    if (now - this.lastPrint < (this.tty ? 200 : 5000) && done !== total) return;
    this.lastPrint = now;
    const secs = Math.max((now - this.started) / 1000, 0.001);
    const rate = done / secs;
    const eta = rate > 0 && total > done ? Math.round((total - done) / rate) : 0;
    const line = `${this.stage}: ${done}/${total} ${unit} (${rate.toFixed(0)}/s, ETA ${eta}s)`;
    if (this.tty) this.out.write(`\r\x1b[K${line}`);
    else this.out.write(line + '\n');
  }
}
