/**
 * @module recall/recall
 * "Has this been done before?" (docs/api.md, GET /v1/recall): the runs whose recorded text
 * holds every word of a query, ranked. The steps, in order, each spending the request's one
 * deadline (reads are raced against it, loops check it):
 *
 * 1. Count the matching spans and take the newest maxMatchingSpans (5,000) in one pass:
 *    finding the newest matches means ranking all of them, so a query matching more than
 *    maxTotalMatches is refused (400 query_too_broad) once maxTotalMatches + 1 are found, naming
 *    its words — each of them matches more on its own, so only another word helps.
 * 2. More than maxMatchingSpans matching says `truncated`. Runs of
 *    three or more characters of an unspaced script are checked in their steps' text, newest
 *    first, until enough have passed (match.ts): each message once, for all the steps of a
 *    batch that resend it.
 * 3. Group them by run; take the maxRunsRead runs (100) with the most matches among them.
 *    More runs than that also says `truncated`.
 * 4. Read how each run ended (its last span end over all its spans, and the failure rule)
 *    and how many spans it has: while step 2 checks the text, when the first page holds
 *    every match in at most maxRunsRead runs (readEndsAhead).
 * 5. Summarize each run from its outline, up to maxSpansPerRun spans (20,000): its steps in
 *    tape order without their prompts and answers (tape-reader.ts, 'outline'), which is all
 *    an entry needs (rank.ts). Runs are read in batches of at most maxSpansPerRun spans in
 *    all, a few batches at a time, each outline dropped once its entry is built: recall holds
 *    a few batches' step rows, not a hundred tapes, and short runs take a read per batch, not
 *    per run.
 * 6. Rank, keep the outcome asked for, and cut to the limit.
 */
import type { Deadline } from '../deadline/deadline.js';
import { ApiError } from '../errors.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { PricingTable } from '../pricing/pricing-table.js';
import type { Database, Queryable } from '../store/database.js';
import { messageTexts, messageWithFullText, recordedTexts, withFullText } from './recorded-text.js';
import { readTapes } from '../tapes/tape-service.js';
import { markRuns, termsToCheck } from './match.js';
import {
  newestMatches,
  firstMatches,
  readRunEnds,
  readTextToCheck,
  queryWords,
  rarestFirst,
  type MatchRow,
  type RankedWords,
  type RunFacts,
} from './query.js';
import { groupMatches, keepOutcome, rankRuns, recallEntry, type RunMatches } from './rank.js';
import type { Term } from './tokenize.js';
import type { OutcomeFilter, RecallBounds, RecallResult, RecalledRun } from './types.js';

export interface RecallDeps {
  db: Database;
  payloads: PayloadStore;
  /** --pricing, loaded; null when not configured */
  pricing: PricingTable | null;
}

export interface RecallQuery {
  /** '' for no tenant */
  tenant: string;
  terms: readonly Term[];
  outcome: OutcomeFilter;
  /** runs answered at most */
  limit: number;
}

export interface RecallContext {
  deadline: Deadline;
  /** wall clock, Unix nanoseconds */
  nowNs: bigint;
  bounds: RecallBounds;
}

export const QUERY_TOO_BROAD = 'query_too_broad';

/** batches of runs summarized at once (runBatches) */
const OUTLINE_READERS = 4;
/** matching steps checked per read: the steps of a batch share the messages their runs resend */
const TEXT_BATCH = 500;

export async function recall(deps: RecallDeps, query: RecallQuery, ctx: RecallContext): Promise<RecallResult> {
  const { deadline, bounds } = ctx;
  const signal = { signal: deadline.signal };
  const words = await deadline.race(
    rarestFirst(deps.db, query.tenant, queryWords(query.terms), signal),
    'counting the words',
  );
  // Counted and the newest page in one pass: a query matching too many is refused.
  const first = await deadline.race(
    firstMatches(deps.db, query.tenant, words, bounds.maxMatchingSpans + 1, bounds.maxTotalMatches, signal),
    'finding the newest matches',
  );
  if (first.total > bounds.maxTotalMatches) throw tooBroad(query.terms, bounds.maxTotalMatches);
  const ahead = readEndsAhead(deps.db, query.tenant, first.matches, ctx);
  const newest = await newestMatching(deps.db, deps.payloads, query, words, first.matches, ctx);
  const grouped = groupMatches(newest.matches, bounds.maxRunsRead);
  const facts =
    (await ahead) ??
    (await runEnds(
      deps.db,
      query.tenant,
      grouped.runs.map((r) => r.run),
      deadline,
    ));
  const entries = await summarizeRuns(deps, query.tenant, grouped.runs, facts, ctx);
  deadline.check('ranking the runs');
  const runs = keepOutcome(rankRuns(entries), query.outcome).slice(0, query.limit);
  return { runs, truncated: newest.overflow || grouped.overflow, unindexed_steps: 0 };
}

function tooBroad(terms: readonly Term[], max: number): ApiError {
  const words = terms.map((t) => JSON.stringify(t.text)).join(', ');
  const subject = terms.length === 1 ? `the word ${words} appears` : `the words ${words} appear together`;
  return new ApiError(
    QUERY_TOO_BROAD,
    `${subject} in more than ${max.toLocaleString('en-US')} spans: recall ranks every match to find the newest, ` +
      'so it refuses a query this broad. Add a word to narrow it.',
  );
}

/**
 * The newest maxMatchingSpans matches (checked where the index cannot tell), and whether there
 * were more, from the first page of maxMatchingSpans + 1 unchecked matches.
 */
async function newestMatching(
  db: Queryable,
  payloads: PayloadStore,
  query: RecallQuery,
  words: RankedWords,
  first: MatchRow[],
  ctx: RecallContext,
): Promise<{ matches: MatchRow[]; overflow: boolean }> {
  const { deadline, bounds } = ctx;
  const max = bounds.maxMatchingSpans;
  const runs = termsToCheck(query.terms);
  if (runs.length === 0) return { matches: first.slice(0, max), overflow: first.length > max };
  const passed: MatchRow[] = [];
  let after: MatchRow | null = null;
  // every page as long as the first: a page costs a pass over the matches whatever its length,
  // and its steps are checked only until enough have passed
  const want = max + 1;
  for (let pageNo = 0; ; pageNo++) {
    const page: MatchRow[] =
      pageNo === 0
        ? first
        : await deadline.race(
            newestMatches(db, query.tenant, words, want, after, { signal: deadline.signal }),
            'finding the newest matches',
          );
    for (let i = 0; i < page.length && passed.length <= max; i += TEXT_BATCH) {
      const batch = page.slice(i, i + TEXT_BATCH);
      const holding = await deadline.race(
        stepsWithRuns(db, payloads, query.tenant, batch, runs, deadline.signal),
        'reading the text of matching steps',
      );
      for (const row of batch) {
        if (holding.has(`${row.trace_id}/${row.span_id}`)) passed.push(row);
        if (passed.length > max) break;
      }
    }
    if (passed.length > max || page.length < want) break;
    after = page[page.length - 1];
  }
  return { matches: passed.slice(0, max), overflow: passed.length > max };
}

/**
 * Which of the steps hold every run in their recorded text (match.ts), as `trace_id/span_id`.
 * A run stands inside one string, so inside one message or the step's own text: each distinct
 * message of the batch that may hold one is read and checked once, not once per step resending
 * it.
 */
async function stepsWithRuns(
  db: Queryable,
  payloads: PayloadStore,
  tenant: string,
  batch: readonly MatchRow[],
  runs: ReturnType<typeof termsToCheck>,
  signal: AbortSignal,
): Promise<Set<string>> {
  const { steps, bodies } = await readTextToCheck(db, tenant, batch, runs, { signal });
  const inMessage = new Map<string, boolean[]>();
  for (const [id, body] of bodies) {
    const found = new Array<boolean>(runs.length).fill(false);
    markRuns(messageTexts(await messageWithFullText(body, payloads, signal)), runs, found);
    inMessage.set(id, found);
  }
  const holding = new Set<string>();
  for (const [key, step] of steps) {
    const found = new Array<boolean>(runs.length).fill(false);
    markRuns(recordedTexts(await withFullText(step.own, payloads, signal)), runs, found);
    for (const id of step.messages) {
      const inIt = inMessage.get(id) ?? [];
      for (let k = 0; k < inIt.length; k++) found[k] ||= inIt[k];
    }
    if (found.every(Boolean)) holding.add(key);
  }
  return holding;
}

/**
 * How the runs of the first page ended, read while its text is checked, when the page holds
 * every match and they fall in at most maxRunsRead runs: the runs answered are among them
 * whatever the check passes. Null otherwise (the runs are known once enough matches have
 * passed). Only the ends: a run whose matches all fail costs a row of that read, where reading
 * its outline too slowed a query whose matches all failed more than it sped one whose passed
 * (docs/benchmarks.md, "Recall at 1M conversation spans").
 */
function readEndsAhead(
  db: Queryable,
  tenant: string,
  first: readonly MatchRow[],
  { deadline, bounds }: RecallContext,
): Promise<Map<string, RunFacts> | null> {
  const runs = [...new Set(first.map((m) => m.run))];
  if (first.length > bounds.maxMatchingSpans || runs.length > bounds.maxRunsRead) return Promise.resolve(null);
  const reading = runEnds(db, tenant, runs, deadline);
  // awaited after the check; a check that fails first leaves it unawaited
  reading.catch(() => {});
  return reading;
}

/** How the runs ended (readRunEnds), within the request's deadline. */
function runEnds(db: Queryable, tenant: string, runs: string[], deadline: Deadline): Promise<Map<string, RunFacts>> {
  return deadline.race(readRunEnds(db, tenant, runs, { signal: deadline.signal }), 'reading how the runs ended');
}

/**
 * Runs in order, in batches of at most maxSpansPerRun spans in all (a run with more is a
 * batch of its own, read up to the bound): each batch is one outline read (one statement), and
 * recall holds a few batches' rows at a time.
 */
export function runBatches(runs: readonly RunMatches[], spans: (run: string) => number, max: number): RunMatches[][] {
  const batches: RunMatches[][] = [];
  let batch: RunMatches[] = [];
  let held = 0;
  for (const r of runs) {
    const n = Math.min(spans(r.run), max);
    if (batch.length > 0 && held + n > max) {
      batches.push(batch);
      batch = [];
      held = 0;
    }
    batch.push(r);
    held += n;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Each run's entry, in the order given, a few batches at a time; none for a run gone since it matched (erased). */
async function summarizeRuns(
  deps: RecallDeps,
  tenant: string,
  runs: readonly RunMatches[],
  facts: ReadonlyMap<string, RunFacts>,
  ctx: RecallContext,
): Promise<RecalledRun[]> {
  const { deadline, bounds } = ctx;
  const entries = new Map<string, RecalledRun>();
  const tick = deadline.checkEvery(1024, 'summarizing the runs');
  const known = runs.filter((r) => facts.has(r.run));
  const batches = runBatches(known, (run) => facts.get(run)?.spans ?? 0, bounds.maxSpansPerRun);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < batches.length) {
      const batch = batches[next++];
      deadline.check('reading the runs');
      const outlines = await readTapes(
        deps,
        tenant,
        batch.map((r) => r.run),
        { maxSpans: bounds.maxSpansPerRun, signal: deadline.signal, bodies: 'outline' },
      );
      for (const r of batch) {
        const outline = outlines.get(r.run);
        const fact = facts.get(r.run);
        if (outline === undefined || fact === undefined) continue;
        entries.set(
          r.run,
          recallEntry(outline, r, fact, {
            pricing: deps.pricing,
            nowNs: ctx.nowNs,
            maxSkeletonEntries: bounds.maxSkeletonEntries,
            tick,
          }),
        );
      }
    }
  };
  const workers = Array.from({ length: Math.min(OUTLINE_READERS, batches.length) }, worker);
  await deadline.race(Promise.all(workers), 'reading the runs');
  return runs.flatMap((r) => entries.get(r.run) ?? []);
}
