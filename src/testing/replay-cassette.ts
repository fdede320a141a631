/**
 * @module testing/replay-cassette
 * The test entry point over a cassette server (cassette-server.ts): base URLs, the replay's
 * status, and an assertion that the agent did what the recording did.
 */
import type { CassetteLimits } from '../cassettes/format.js';
import { startCassetteServer } from './cassette-server.js';

export interface ReplayCassetteOptions {
  /** strict (default): every call must ask what the recording asked */
  mode?: 'strict' | 'loose';
  timing?: 'fast' | 'recorded';
  speed?: number;
  /** the run to replay (default: the cassette's root run) */
  run?: string;
  limits?: CassetteLimits;
}

export interface CassetteReplay {
  id: string;
  /** OpenAI base URL (…/openai/v1) and Anthropic base URL (…/anthropic) */
  baseUrls: { openai: string; anthropic: string };
  /** GET /v1/replays/{id}: served, remaining, diverged, calls, playback */
  status(): Promise<ReplayStatus>;
  /** Throws ReplayMismatch with the first mismatching path; resolves when the agent replayed the recording whole. */
  assertReplayed(): Promise<void>;
  close(): Promise<void>;
}

export interface ReplayStatus {
  served: number;
  remaining: number;
  exhausted_calls: number;
  diverged: null | {
    step: number;
    expected_digest: string | null;
    got_digest: string;
    difference?: {
      message?: number;
      role?: string;
      field?: string;
      at_char?: number;
      recorded?: unknown;
      got?: unknown;
    };
  };
  [key: string]: unknown;
}

/** Where the agent parted from the recording: step, message, field, recorded vs got. */
export class ReplayMismatch extends Error {
  constructor(
    message: string,
    readonly path: {
      step: number;
      message?: number;
      role?: string;
      field?: string;
      at_char?: number;
      recorded?: unknown;
      got?: unknown;
    },
  ) {
    super(message);
    this.name = 'ReplayMismatch';
  }
}

export async function replayCassette(file: string, options: ReplayCassetteOptions = {}): Promise<CassetteReplay> {
  const server = await startCassetteServer({ cassette: file, ...options });
  const id = server.replay.id;
  const status = async (): Promise<ReplayStatus> => {
    const res = await fetch(`${server.origin}/v1/replays/${id}`);
    return (await res.json()) as ReplayStatus;
  };
  const llmSteps =
    server.cassette.runs
      .find((r) => r.run === (options.run ?? server.cassette.manifest.root_run))
      ?.steps.filter((s) => s.kind === 'llm') ?? [];
  return {
    id,
    baseUrls: server.replay.base_urls,
    status,
    async assertReplayed() {
      const s = await status();
      if (s.diverged) {
        const d = s.diverged.difference ?? {};
        const where = [
          `step ${s.diverged.step}`,
          d.message === undefined ? null : `message ${d.message}${d.role ? ` (${d.role})` : ''}`,
          d.field ? `field ${d.field}` : null,
          d.at_char === undefined ? null : `character ${d.at_char}`,
        ].filter(Boolean);
        const detail = d.field ? `: recorded ${JSON.stringify(d.recorded)}, got ${JSON.stringify(d.got)}` : '';
        throw new ReplayMismatch(`the agent diverged from the recording at ${where.join(', ')}${detail}`, {
          step: s.diverged.step,
          ...d,
        });
      }
      if (s.remaining > 0) {
        const next = llmSteps[s.served]?.index ?? s.served;
        throw new ReplayMismatch(
          `the agent did not consume every recorded model step: ${s.remaining} left, the first at step ${next}`,
          { step: next },
        );
      }
      if (s.exhausted_calls > 0)
        throw new ReplayMismatch(`the agent made ${s.exhausted_calls} model call(s) more than the recording holds`, {
          step: llmSteps.length ? llmSteps[llmSteps.length - 1].index + 1 : 0,
        });
    },
    close: server.close,
  };
}
