/**
 * @module recall/recall
 * "Has this been done before?" (docs/api.md, GET /v1/recall): the runs whose recorded text
 * holds every word of a query, ranked. The steps, in order, each spending the request's one
 * deadline (reads are raced against it, loops check it):
 *
 * 1. Count the matching spans, stopping at maxTotalMatches + 1: finding the newest matches
 *    means ranking all of them, so a query matching more is refused (400 query_too_broad),
 *    naming its words — each of them matches more on its own, so only another word helps.
 * 2. Take the newest maxMatchingSpans matching spans (5,000); more says `truncated`. Runs of
 *    three or more characters of an unspaced script are checked in their steps' text, newest
 *    first, until enough have passed (match.ts).
 * 3. Group them by run; take the maxRunsRead runs (100) with the most matches among them.
 *    More runs than that also says `truncated`.
 * 4. Read how each run ended (its last span end over all its spans, and the failure rule).
 * 5. Summarize each run from its outline, up to maxSpansPerRun spans (20,000): its steps in
 *    tape order without their prompts and answers (tape-reader.ts, 'outline'), which is all
 *    an entry needs (rank.ts). A few runs are read at a time and each outline is dropped
 *    once its entry is built, so recall holds a few runs' step rows, not a hundred tapes.
 * 6. Rank, keep the outcome asked for, and cut to the limit.
 */
import type { Deadline } from '../deadline/deadline.js';
import { ApiError } from '../errors.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { PricingTable } from '../pricing/pricing-table.js';
import type { Database, Queryable } from '../store/database.js';
import { withFullText } from './recorded-text.js';
import { readTape } from '../tapes/tape-service.js';
import { stepHasRuns, termsToCheck } from './match.js';
import {
  countMatches,
  newestMatches,
  readRunEnds,
  readStepTexts,
  queryWords,
  rarestFirst,
  type MatchRow,
} from './query.js';
import type { RunEnd } from '../tapes/run-outcome.js';
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

/**
 * For the statements that find matches: PostgreSQL cannot estimate how many steps a message
 * digest finds (every digest is distinct, so the column has no common elements), guesses
 * thousands, and then compiles the plan (JIT, seconds) or scans in parallel, for statements
 * that read a few index pages (docs/benchmarks.md, "Recall's plans").
 */
const PLANNER_SETTINGS =
  "SELECT set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)";

/** runs summarized at once: how many outlines recall holds at a time */
const OUTLINE_READERS = 4;
const TEXT_BATCH = 100;

export async function recall(deps: RecallDeps, query: RecallQuery, ctx: RecallContext): Promise<RecallResult> {
  const { deadline, bounds } = ctx;
  const signal = { signal: deadline.signal };
  const newest = await deadline.race(
    deps.db.transaction(async (tx) => {
      // Each statement starts only within the deadline (the race outside answers on time).
      await tx.query(PLANNER_SETTINGS, [], signal);
      deadline.check('counting the words');
      const words = await rarestFirst(tx, query.tenant, queryWords(query.terms), signal);
      deadline.check('finding the newest matches');
      // The newest matches first: a page holding them all, within the limit, needs no count.
      const first = await newestMatches(tx, query.tenant, words, bounds.maxMatchingSpans + 1, null, signal);
      if (first.length > Math.min(bounds.maxMatchingSpans, bounds.maxTotalMatches)) {
        deadline.check('counting matching spans');
        const total = await countMatches(tx, query.tenant, words, bounds.maxTotalMatches + 1, signal);
        if (total > bounds.maxTotalMatches) throw tooBroad(query.terms, bounds.maxTotalMatches);
      }
      deadline.check('finding the newest matches');
      return newestMatching(tx, deps.payloads, query, words, first, ctx);
    }),
    'finding the newest matches',
  );
  const grouped = groupMatches(newest.matches, bounds.maxRunsRead);
  const facts = await deadline.race(
    readRunEnds(
      deps.db,
      query.tenant,
      grouped.runs.map((r) => r.run),
      signal,
    ),
    'reading how the runs ended',
  );
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
  words: readonly string[],
  first: MatchRow[],
  ctx: RecallContext,
): Promise<{ matches: MatchRow[]; overflow: boolean }> {
  const { deadline, bounds } = ctx;
  const max = bounds.maxMatchingSpans;
  const runs = termsToCheck(query.terms);
  if (runs.length === 0) return { matches: first.slice(0, max), overflow: first.length > max };
  const passed: MatchRow[] = [];
  let after: MatchRow | null = null;
  for (let pageNo = 0; ; pageNo++) {
    const want = pageNo === 0 ? max + 1 : Math.max(64, max + 1 - passed.length);
    const page: MatchRow[] =
      pageNo === 0
        ? first
        : await deadline.race(
            newestMatches(db, query.tenant, words, want, after, { signal: deadline.signal }),
            'finding the newest matches',
          );
    for (let i = 0; i < page.length && passed.length <= max; i += TEXT_BATCH) {
      const batch = page.slice(i, i + TEXT_BATCH);
      const texts = await deadline.race(
        readStepTexts(db, query.tenant, batch, { signal: deadline.signal }),
        'reading the text of matching steps',
      );
      for (const row of batch) {
        const step = texts.get(`${row.trace_id}/${row.span_id}`);
        if (step === undefined) continue;
        const full = await deadline.race(withFullText(step, payloads, deadline.signal), 'reading offloaded text');
        if (stepHasRuns(full, runs)) passed.push(row);
        if (passed.length > max) break;
      }
    }
    if (passed.length > max || page.length < want) break;
    after = page[page.length - 1];
  }
  return { matches: passed.slice(0, max), overflow: passed.length > max };
}

/** Each run's entry, in the order given, a few runs at a time; none for a run gone since it matched (erased). */
async function summarizeRuns(
  deps: RecallDeps,
  tenant: string,
  runs: readonly RunMatches[],
  facts: ReadonlyMap<string, RunEnd>,
  ctx: RecallContext,
): Promise<RecalledRun[]> {
  const { deadline, bounds } = ctx;
  const out = new Array<RecalledRun | undefined>(runs.length);
  const tick = deadline.checkEvery(1024, 'summarizing the runs');
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runs.length) {
      const i = next++;
      const fact = facts.get(runs[i].run);
      if (fact === undefined) continue;
      deadline.check('reading the runs');
      const outline = await readTape(deps, tenant, runs[i].run, {
        maxSpans: bounds.maxSpansPerRun,
        signal: deadline.signal,
        bodies: 'outline',
      });
      if (outline === undefined) continue;
      out[i] = recallEntry(outline, runs[i], fact, {
        pricing: deps.pricing,
        nowNs: ctx.nowNs,
        maxSkeletonEntries: bounds.maxSkeletonEntries,
        tick,
      });
    }
  };
  const workers = Array.from({ length: Math.min(OUTLINE_READERS, runs.length) }, worker);
  await deadline.race(Promise.all(workers), 'reading the runs');
  return out.filter((entry): entry is RecalledRun => entry !== undefined);
}
