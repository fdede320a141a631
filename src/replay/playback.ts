/**
 * @module replay/playback
 * Timed playback of streamed answers. `fast` (the default) sends a stream at once. `recorded`
 * paces its events by the recording: the first content at the recorded time to first chunk
 * (or at once, when none was recorded), the rest spread evenly up to the step's recorded
 * duration, since no instrumentation records where a provider cut its chunks. `speed` scales
 * every wait (2 is twice as fast). A paused replay holds its streams where they are; resuming
 * continues them, and time spent paused does not count.
 */
export type Timing = 'fast' | 'recorded';

export interface PlaybackState {
  timing: Timing;
  speed: number;
  paused: boolean;
}

export const MAX_SPEED = 1000;

export class Playback {
  timing: Timing;
  speed: number;
  private pausedSince: number | null = null;
  private pausedMs = 0;
  private resumed: Promise<void> = Promise.resolve();
  private resume: () => void = () => {};

  constructor(timing: Timing = 'fast', speed = 1) {
    this.timing = timing;
    this.speed = speed;
  }

  get paused(): boolean {
    return this.pausedSince !== null;
  }

  state(): PlaybackState {
    return { timing: this.timing, speed: this.speed, paused: this.paused };
  }

  pause(): void {
    if (this.pausedSince !== null) return;
    this.pausedSince = Date.now();
    this.resumed = new Promise((resolve) => {
      this.resume = resolve;
    });
  }

  unpause(): void {
    if (this.pausedSince === null) return;
    this.pausedMs += Date.now() - this.pausedSince;
    this.pausedSince = null;
    this.resume();
  }

  /** Milliseconds of playback time so far: wall time less time spent paused. */
  private clock(): number {
    return Date.now() - this.pausedMs - (this.pausedSince === null ? 0 : Date.now() - this.pausedSince);
  }

  /** Waits until `offsetNs` of recorded time (scaled by speed) has played since `startMs`. */
  private async until(startMs: number, offsetNs: bigint): Promise<void> {
    for (;;) {
      if (this.paused) await this.resumed;
      const due = startMs + Number(offsetNs) / 1e6 / this.speed;
      const wait = due - this.clock();
      if (wait <= 0 && !this.paused) return;
      if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, 250)).unref?.());
    }
  }

  /**
   * The body as a stream of its server-sent events, paced as described above; `fast`, or a
   * body that is not a stream, is answered whole.
   */
  pace(body: Buffer, durationNs: bigint, firstChunkNs: bigint | null): Buffer | ReadableStream<Uint8Array> {
    if (this.timing === 'fast') return body;
    const events = body.toString('utf8').split(/(?<=\n\n)/);
    if (events.length < 2) return body;
    const first = firstChunkNs !== null && firstChunkNs <= durationNs ? firstChunkNs : 0n;
    const rest = durationNs > first ? durationNs - first : 0n;
    const start = this.clock();
    const encoder = new TextEncoder();
    let i = 0;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (i >= events.length) {
          controller.close();
          return;
        }
        const offset = i === 0 ? first : first + (rest * BigInt(i)) / BigInt(events.length - 1);
        await this.until(start, offset);
        controller.enqueue(encoder.encode(events[i]));
        i++;
      },
    });
  }
}
