/**
 * @module normalize/run-identity
 * Which run a span names itself (docs/architecture.md "Runs"). Only the span's own attributes count
 * here; a span that names none belongs to its nearest ancestor's run, which needs the
 * span tree and is resolved by tapes/resolve-runs.ts.
 */
import type { Attributes } from '../spans/span-record.js';
import { str } from './attrs.js';

/**
 * Session keys, first present wins: the OpenTelemetry, GenAI and OpenLLMetry keys first;
 * then the Langfuse and Vercel AI SDK (≤ v6) keys, and Google ADK's. Values may be
 * non-strings (stringified); an empty value names nothing.
 */
export const RUN_ID_KEYS = [
  'session.id',
  'gen_ai.conversation.id',
  'traceloop.association.properties.session_id',
  'langfuse.session.id',
  'ai.telemetry.metadata.sessionId',
  'gcp.vertex.agent.session_id', // Google ADK's model-call spans
] as const;

/**
 * An explicit parent run. No convention defines one, so tapedeck documents its own key,
 * `tapedeck.parent_run`, and also accepts `session.parent_id` (the name some agent
 * frameworks use for a sub-session's parent). The other way to name a parent run — a root
 * span whose parent span belongs to another run — needs the tree (tapes/resolve-runs.ts).
 */
export const PARENT_RUN_KEYS = ['tapedeck.parent_run', 'session.parent_id'] as const;

function first(attrs: Attributes, keys: readonly string[]): string | null {
  for (const k of keys) {
    const v = str(attrs[k]);
    if (v !== null && v.trim() !== '') return v;
  }
  return null;
}

export function ownRunOf(attrs: Attributes): string | null {
  return first(attrs, RUN_ID_KEYS);
}

export function parentRunOf(attrs: Attributes): string | null {
  return first(attrs, PARENT_RUN_KEYS);
}

/** The run of a span that names none and has no ancestor that does. */
export function traceRun(traceId: string): string {
  return `trace:${traceId}`;
}
