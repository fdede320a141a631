/**
 * @module runs/dataset
 * Completed runs → chat-format JSONL for fine-tuning: one `{"messages": [...]}` line per run
 * (chat-format.ts), streamed with bounded memory.
 *
 * Runs are paged by keyset in run id order (run-pages.ts); a page's tapes are read in chunks
 * of at most one tape's worth of spans (20,000, the tape cap: tapes/tape-reader.ts), in stored form;
 * then, one run at a time, its payloads are inlined (within --tape-max-bytes), it is
 * reconstructed, turned into a conversation and written, and let go. Memory holds one page
 * of run facts, one chunk of stored tapes (as much as one tape at its cap) and one resolved
 * tape, whatever the store's size. Every run in the time window is *considered*;
 * each is either exported or skipped for exactly one reason, checked in this order, so
 * `exported + sum(skipped) = considered`:
 *   no_terminal    outcome unknown: the run's last span ended less than 15 minutes ago,
 *                  it may still be going (tapedeck.runs)
 *   outcome        its outcome (success / failure) is not the one asked for (--outcome)
 *   truncated      its tape was cut at the span cap, or content it needs stayed offloaded
 *   no_input       no model call with a recorded prompt (content capture off, or no call)
 *   no_output      no final answer (the last call failed, asked for tools, or recorded nothing)
 *   invalid_turns  the conversation is one no trainer accepts (chat-format.ts checkChatOrder:
 *                  no user turn first, a tool result with no call, a call with no result, no
 *                  final answer); consecutive turns of one role are exported as recorded, or
 *                  with the user turns joined when `mergeUserTurns` asks
 */
import type { Tape } from '../normalize/step.js';
import type { TapeDeps } from '../tapes/tape-service.js';
import { DEFAULT_MAX_TAPE_SPANS } from '../tapes/tape-reader.js';
import { reconstructRun } from './reconstruct.js';
import { conversationOf } from './conversation.js';
import { toChatMessages } from './chat-format.js';
import { pageRuns, type RunFacts, type RunWindow } from './run-pages.js';
import { readTapes, resolveTape } from '../tapes/tape-service.js';

export type OutcomeFilter = 'success' | 'failure' | 'any';
export const OUTCOME_FILTERS: readonly OutcomeFilter[] = ['success', 'failure', 'any'];

export interface DatasetFilter extends RunWindow {
  /** which ended runs to export; default success */
  outcome: OutcomeFilter;
  /** join consecutive user turns into one (chat-format.ts); default false */
  mergeUserTurns?: boolean;
}

export const SKIP_REASONS = ['no_terminal', 'outcome', 'truncated', 'no_input', 'no_output', 'invalid_turns'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface DatasetSummary {
  considered: number;
  exported: number;
  /** every reason, 0 included, so the counts read the same from run to run */
  skipped: Record<SkipReason, number>;
}

export interface DatasetOptions {
  /** runs per page query; default 200 */
  pageSize?: number;
  /** spans read per tape query (a chunk of the page's runs); default 20,000 */
  chunkSpans?: number;
  /** payload bytes inlined per run; default 8 MiB (--tape-max-bytes) */
  maxResolveBytes?: number;
  /** stops the export between runs (the client went away, the command was interrupted) */
  signal?: AbortSignal;
  /** called after each run considered, with the run and the reason it was skipped (null: exported) */
  onRun?(summary: Readonly<DatasetSummary>, run: { run: string; skipped: SkipReason | null }): void;
}

export const DEFAULT_DATASET_PAGE_SIZE = 200;

export function emptySummary(): DatasetSummary {
  return {
    considered: 0,
    exported: 0,
    skipped: Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])) as Record<SkipReason, number>,
  };
}

/**
 * The JSONL lines (each ending in "\n"), lazily: a consumer that stops pulling stops the
 * export. `summary` is filled in as runs are considered and is final when the iteration ends.
 */
export async function* chatDatasetLines(
  deps: TapeDeps,
  tenant: string,
  filter: DatasetFilter,
  summary: DatasetSummary,
  options: DatasetOptions = {},
): AsyncGenerator<string> {
  const pageSize = options.pageSize ?? DEFAULT_DATASET_PAGE_SIZE;
  let after: string | null = null;
  for (;;) {
    options.signal?.throwIfAborted();
    const page = await pageRuns(deps.db, tenant, filter, after, pageSize, { signal: options.signal });
    for (const chunk of chunksOf(page, options.chunkSpans ?? DEFAULT_MAX_TAPE_SPANS)) {
      const wanted = chunk.filter((f) => precheck(filter, f) === null).map((f) => f.run);
      const tapes = await readTapes(deps, tenant, wanted, { signal: options.signal });
      for (const facts of chunk) {
        const stored = tapes.get(facts.run);
        tapes.delete(facts.run);
        const tape =
          stored &&
          (await resolveTape(deps, stored, { maxResolveBytes: options.maxResolveBytes, signal: options.signal }));
        const fate = precheck(filter, facts) ?? exportRun(tape, facts, filter);
        summary.considered++;
        if (typeof fate === 'string') summary.skipped[fate]++;
        else summary.exported++;
        options.onRun?.(summary, { run: facts.run, skipped: typeof fate === 'string' ? fate : null });
        if (typeof fate !== 'string') yield fate.line;
      }
    }
    if (page.length < pageSize) return;
    after = page[page.length - 1].run;
  }
}

/** Runs in groups whose tapes hold at most `maxSpans` spans together (a big run alone). */
function* chunksOf(page: readonly RunFacts[], maxSpans: number): Generator<RunFacts[]> {
  let chunk: RunFacts[] = [];
  let spans = 0;
  for (const f of page) {
    const size = Math.min(f.spans, DEFAULT_MAX_TAPE_SPANS + 1);
    if (chunk.length && spans + size > maxSpans) {
      yield chunk;
      chunk = [];
      spans = 0;
    }
    chunk.push(f);
    spans += size;
  }
  if (chunk.length) yield chunk;
}

/** Runs the whole export without writing anything: the counts `?summary=true` answers. */
export async function summarizeChatDataset(
  deps: TapeDeps,
  tenant: string,
  filter: DatasetFilter,
  options: DatasetOptions = {},
): Promise<DatasetSummary> {
  const summary = emptySummary();
  for await (const _line of chatDatasetLines(deps, tenant, filter, summary, options));
  return summary;
}

/** What the run's facts alone decide, before its tape is read. */
function precheck(filter: DatasetFilter, facts: RunFacts): SkipReason | null {
  if (facts.outcome === 'unknown') return 'no_terminal';
  if (filter.outcome !== 'any' && facts.outcome !== filter.outcome) return 'outcome';
  return null;
}

function exportRun(tape: Tape | undefined, facts: RunFacts, filter: DatasetFilter): SkipReason | { line: string } {
  if (!tape) return 'no_terminal'; // erased between the page and the read: nothing says it ended
  const rec = reconstructRun(tape, facts);
  if (rec.status === 'truncated') return 'truncated';
  const conversation = conversationOf(tape, rec);
  if ('gap' in conversation) return conversation.gap;
  const chat = toChatMessages(conversation.messages, { mergeUserTurns: filter.mergeUserTurns === true });
  if ('invalid' in chat) return 'invalid_turns';
  return { line: `${JSON.stringify({ messages: chat.messages })}\n` };
}
