/**
 * Recall's ways of finding the steps that hold every word (src/recall/query.ts) agree with
 * each other and with a plain statement of the rule, for every word taken first: one word's
 * steps alone; streamed
 * (each step of the first word checked for the others, through hash tables of the rare words'
 * messages or message by message for a common word) and collected (the first word's steps
 * gathered, their distinct messages read once). Small stores count every word as rare, so the
 * choice is forced here; recall.test.ts checks the answers the ranking picks. Each store is
 * written twice: a run a request, so every message keeps its words, and every run in one
 * request, so the words many messages share are posted as bits (tapes/message-rows.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { firstMatches, queryWords, rarestFirst, type RankedWords } from '../../src/recall/query.js';
import { queryTerms } from '../../src/recall/tokenize.js';
import { conversationSpans } from '../helpers/conversation-spans.js';
import { databaseKinds } from '../helpers/databases.js';
import { BLOCK_SIZE } from '../../src/tapes/message-rows.js';
import { openRecallFixture, recallRuns, type RecallFixture } from '../unit/recall/recall-fixtures.js';

/** Queries that find steps, in steps' own words and in messages several calls resend. */
const FOUND = [
  'weather Paris',
  'umbrella drizzle',
  '天气预报',
  '北京天气',
  '北京 天气 forecast',
  'harbour tide',
  'harbour tide 上海',
  'storm lighthouse',
  'lighthouse',
  'drizzle',
];
/** Queries whose words are each found, but never all in one step, or not at all. */
const NONE = ['umbrella zeppelin', 'shops reviews', 'get_weather reviews', 'weather zyzzyvaquux', 'zyzzyvaquux'];

/** Words and how many runs' one message holds each: either side of the chunk ends. */
const STONE_COUNTS = { keystone: 5, millstone: 16, flagstone: 17, cobblestone: 37 };
const STONES = 37;

/** Every step holding each word in its own words or in a message of its lists, as `trace/span`. */
const RULE = `SELECT encode(st.trace_id, 'hex') || '/' || encode(st.span_id, 'hex') AS key
  FROM tapedeck_store.steps st
 WHERE st.tenant = '' AND NOT EXISTS (
   SELECT 1 FROM unnest($1::bigint[]) AS q(w)
    WHERE NOT coalesce(st.words @> ARRAY[q.w], false)
      AND NOT EXISTS (
        SELECT 1 FROM tapedeck_store.messages m
         WHERE m.tenant = '' AND m.id = ANY (coalesce(st.request_messages, '{}') || coalesce(st.response_messages, '{}'))
           AND (m.words @> ARRAY[q.w] OR EXISTS (
                  SELECT 1 FROM tapedeck_store.message_postings p
                   WHERE p.tenant = '' AND p.word = q.w AND p.block * ${BLOCK_SIZE} <= m.id
                     AND m.id < p.block * ${BLOCK_SIZE} + length(p.bits) * 8
                     AND get_bit(p.bits, (m.id - p.block * ${BLOCK_SIZE})::int) = 1))))`;

/** The words in each order that starts from a different one. */
const rotations = (words: string[]) => words.map((_, i) => [...words.slice(i), ...words.slice(0, i)]);

const WRITES = ['a run a request', 'every run in one request'] as const;

describe.each(databaseKinds.flatMap((kind) => WRITES.map((writes) => [kind, writes] as const)))(
  'recall matching on %s, %s',
  (kind, writes) => {
    let fx: RecallFixture;
    beforeAll(async () => {
      fx = await openRecallFixture(kind, recallRuns);
      const requests: ReturnType<typeof conversationSpans>[] = [];
      // conversations resending their history, sharing a system prompt and some questions
      const questions = [
        ['Is the harbour tide high in 上海 today?', 'And the storm warning?', '北京天气 forecast too'],
        ['Is the harbour tide high in 上海 today?', 'Which lighthouse is open?', 'Any storm near the lighthouse?'],
        ['What is the tide at noon?', 'Is the harbour closed for the storm?', '北京 天气 forecast please'],
      ];
      for (const [i, qs] of questions.entries()) {
        const spans = conversationSpans({
          run: `harbour-${i}`,
          system: 'You answer questions about the harbour and the weather.',
          questions: qs,
          answer: (k) => (k === 1 ? 'The lighthouse keeper says the tide turns at six.' : `Noted, ${k}.`),
        });
        requests.push(spans);
      }
      // one call a run, each asking its own question: a word's messages are each in one step, so
      // a message left out of the first word's chunks (their ends: 16 ids a scan) loses a step
      for (let i = 0; i < STONES; i++) {
        const words = Object.entries(STONE_COUNTS).flatMap(([word, n]) => (i < n ? [word] : []));
        const spans = conversationSpans({
          run: `stones-${i}`,
          system: 'You answer questions about masonry.',
          questions: [`Question ${i}: ${words.join(' ')}?`],
          answer: () => 'Noted.',
        });
        requests.push(spans);
      }
      if (writes === 'a run a request')
        for (const spans of requests) await ingestSpans(spans, { tenant: '' }, fx.store.ingest);
      else await ingestSpans(requests.flat(), { tenant: '' }, fx.store.ingest);
      const [{ n }] = await fx.store.db.query<{ n: string }>(
        'SELECT count(*)::text AS n FROM tapedeck_store.message_postings',
      );
      expect(n === '0').toBe(writes === 'a run a request');
    });
    afterAll(async () => {
      await fx?.drop();
    });

    it('finds the same steps either way, from whichever word it starts', async () => {
      for (const q of [...FOUND, ...NONE]) {
        const ranked = await rarestFirst(fx.store.db, '', queryWords(queryTerms(q)));
        const rule = await fx.store.db.query<{ key: string }>(RULE, [ranked.words]);
        const expected = rule.map((r) => r.key).sort();
        expect({ q, found: expected.length > 0 }).toEqual({ q, found: FOUND.includes(q) });
        for (const words of rotations(ranked.words)) {
          const n = words.length;
          const ways: [string, RankedWords][] = [
            ['streamed, the others rare', { words, rare: n, counts: [] }],
            ['streamed, the others common', { words, rare: 1, counts: [] }],
            ['streamed, none rare', { words, rare: 0, counts: [] }],
            ['collected', { words, rare: n, counts: [0, ...words.slice(1).map(() => 1)] }],
          ];
          for (const [way, ranking] of ways) {
            const found = await firstMatches(fx.store.db, '', ranking, 10_000, 10_000);
            const keys = found.matches.map((m) => `${m.trace_id}/${m.span_id}`).sort();
            expect({ q, words, way, total: found.total, keys }).toEqual({
              q,
              words,
              way,
              total: expected.length,
              keys: expected,
            });
          }
        }
      }
    });

    it('finds every message of the first word, however many chunks they fill', async () => {
      for (const [word, n] of Object.entries(STONE_COUNTS)) {
        // the word first, alone and before another every one of its steps holds, each way; and
        // after it, checked in each step of the other
        const words = queryWords(queryTerms(`${word} masonry`));
        const after = [...words].reverse();
        const ways: [string, RankedWords][] = [
          ['alone', { words: words.slice(0, 1), rare: 1, counts: [] }],
          ['streamed, the other rare', { words, rare: 2, counts: [] }],
          ['streamed, the other common', { words, rare: 1, counts: [] }],
          ['collected', { words, rare: 2, counts: [0, 1] }],
          ['second, streamed, rare', { words: after, rare: 2, counts: [] }],
          ['second, streamed, common', { words: after, rare: 1, counts: [] }],
          ['second, collected', { words: after, rare: 2, counts: [0, 1] }],
        ];
        for (const [way, ranking] of ways) {
          const found = await firstMatches(fx.store.db, '', ranking, 10_000, 10_000);
          const runs = new Set(found.matches.map((m) => m.run));
          expect({ word, way, total: found.total, runs: runs.size }).toEqual({ word, way, total: n, runs: n });
        }
      }
    });
  },
);
