/**
 * @module replay/replay
 * One live replay: its snapshot, its cursors (model steps, and tool steps on a cursor of their
 * own), what it served, and its first divergence. Calls to one replay take turns, each from
 * reading the next step to consuming it; calls to other replays never wait for it.
 */
import type { Difference } from './explain.js';
import type { ForkState } from './fork.js';
import { Playback } from './playback.js';
import type { Held } from './registry.js';
import type { Snapshot, ToolEntry } from './snapshot.js';

export interface CallRecord {
  step: number;
  matched: boolean;
  at_ns: bigint;
}

export interface Divergence {
  step: number;
  at_ns: bigint;
  expected_digest: string | null;
  got_digest: string;
  difference?: Difference;
}

export interface ReplayInit {
  id: string;
  snapshot: Snapshot;
  /** the share this replay is counted in */
  shareKey: string;
  /** the tenant whose bound credentials may use it */
  tenant: string | null;
  /** the tenant the recording was read as (null: operator view), for re-reading it */
  readTenant: string | null;
  expiresNs: bigint;
  /** entries the call log keeps */
  callLogEntries: number;
  /** how streams are paced (default: fast) */
  playback?: Playback;
  /** the last erasure recorded before its tape was read (ErasureWatch.latest) */
  erasureSeq: bigint;
  /** set when the replay is a fork (fork.ts) */
  fork?: ForkState;
}

export class Replay implements Held {
  chargedBytes = 0;
  /** next model step to serve (index into snapshot.llm) */
  cursor = 0;
  served = 0;
  exhaustedCalls = 0;
  explanations = 0;
  readonly calls: CallRecord[] = [];
  diverged: Divergence | null = null;
  /** erasures up to this number were checked against what it holds */
  erasureSeq: bigint;
  /** the erasure that withdrew it, or null while it is live */
  withdrawnBy: string | null = null;
  private readonly toolServed = new Set<number>();
  private turn: Promise<void> = Promise.resolve();

  readonly id: string;
  snapshot: Snapshot;
  readonly shareKey: string;
  readonly tenant: string | null;
  readonly readTenant: string | null;
  readonly expiresNs: bigint;
  readonly playback: Playback;
  readonly fork: ForkState | null;
  private readonly callLogEntries: number;

  constructor(init: ReplayInit) {
    this.id = init.id;
    this.snapshot = init.snapshot;
    this.shareKey = init.shareKey;
    this.tenant = init.tenant;
    this.readTenant = init.readTenant;
    this.expiresNs = init.expiresNs;
    this.callLogEntries = init.callLogEntries;
    this.playback = init.playback ?? new Playback();
    this.erasureSeq = init.erasureSeq;
    this.fork = init.fork ?? null;
  }

  /** Withdrawn by an erasure: its content is dropped; every later call answers 410. */
  withdraw(erasureId: string): void {
    this.withdrawnBy = erasureId;
    const s = this.snapshot;
    this.snapshot = {
      ...s,
      llm: [],
      tools: [],
      held: { tenant: s.held.tenant, run: s.held.run, traces: new Set(), spans: new Set(), payloads: new Set() },
    };
  }

  expiredAt(now: bigint): boolean {
    return now >= this.expiresNs;
  }

  /** Runs fn once every earlier call to this replay has finished its turn. */
  async takeTurn<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.turn;
    let release!: () => void;
    this.turn = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Consumes the current model step. */
  consume(matched: boolean, atNs: bigint): void {
    const entry = this.snapshot.llm[this.cursor];
    this.cursor++;
    this.served++;
    if (this.calls.length < this.callLogEntries) this.calls.push({ step: entry.step, matched, at_ns: atNs });
  }

  /** The next tool step not yet served (with that name when given), or undefined. */
  nextTool(name: string | null): ToolEntry | undefined {
    return this.snapshot.tools.find((t) => !this.toolServed.has(t.step) && (name === null || t.tool === name));
  }

  markToolServed(step: number): void {
    this.toolServed.add(step);
  }

  status(): Record<string, unknown> {
    return {
      id: this.id,
      run: this.snapshot.run,
      mode: this.snapshot.mode,
      served: this.served,
      remaining: this.snapshot.llm.length - this.cursor,
      diverged: this.diverged,
      calls: this.calls,
      exhausted_calls: this.exhaustedCalls,
      unreadable_tool_steps: this.snapshot.unreadableToolSteps,
      expires_at_ns: this.expiresNs,
      playback: this.playback.state(),
      ...(this.fork
        ? {
            fork: {
              run: this.fork.run,
              at_step: this.fork.atStep,
              answer_served: this.fork.answerServed,
              live_calls: this.fork.liveCalls,
            },
          }
        : {}),
    };
  }
}
