/**
 * `tapedeck reindex` on a store whose steps the previous normalizer derived: version 10
 * parsed JSON-shaped text into the step (tool arguments and results as objects, a structured
 * answer's spacing and number spelling lost). The built binary re-derives every step from the
 * stored spans, and `tapedeck tape` then shows the text as recorded, with the same digests.
 */
import { expect, it } from 'vitest';
import { canonicalJson } from '../../src/json/canonical.js';
import type { JsonValue } from '../../src/json/json-value.js';
import { comparableForm } from '../../src/normalize/comparable.js';
import { ingestCaptures, useCli } from '../helpers/cli.js';

const RUN = 'sess-openinference-openai-weather';
const PREVIOUS_VERSION = 10;

/** A stored value as normalizer 10 wrote it: every JSON-shaped string parsed. */
const asPreviousVersion = (text: string | null) =>
  text === null ? null : canonicalJson(comparableForm(JSON.parse(text) as JsonValue));

const cli = useCli('reindex-older', async (store) => {
  await ingestCaptures(store, ['openinference-openai/weather']);
  const rows = await store.db.query<{
    trace_id: Uint8Array;
    span_id: Uint8Array;
    request: string | null;
    response: string | null;
  }>('SELECT trace_id, span_id, request::text AS request, response::text AS response FROM tapedeck_store.steps');
  for (const r of rows) {
    await store.db.query(
      `UPDATE tapedeck_store.steps SET request = $1::json, response = $2::json, normalizer_version = $3
        WHERE trace_id = $4::bytea AND span_id = $5::bytea`,
      [
        asPreviousVersion(r.request),
        asPreviousVersion(r.response),
        PREVIOUS_VERSION,
        Buffer.from(r.trace_id),
        Buffer.from(r.span_id),
      ],
    );
  }
});

type Any = any; // a tape as the CLI prints it

async function tape(): Promise<Any> {
  const r = await cli.run('tape', RUN, '--json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

it('re-derives the steps the previous normalizer stored, and the tape shows the recorded text', async () => {
  const before = await tape();
  const toolBefore = before.steps.find((s: Any) => s.kind === 'tool');
  expect(toolBefore.request).toEqual({ city: 'Paris' });

  const r = await cli.run('reindex');
  expect([r.code, r.stderr]).toEqual([0, '']);

  const after = await tape();
  const tool = after.steps.find((s: Any) => s.kind === 'tool');
  expect(tool.request).toBe('{"city":"Paris"}');
  expect(tool.response).toBe('{"city":"Paris","temperature_c":18,"condition":"partly cloudy","humidity_pct":62}');
  const call = after.steps.find((s: Any) => s.kind === 'llm').response[0].tool_calls[0];
  expect(call.arguments).toBe('{"city":"Paris"}');
  // the identities were already those of the value's comparable form
  expect(after.steps.map((s: Any) => [s.request_digest, s.response_digest])).toEqual(
    before.steps.map((s: Any) => [s.request_digest, s.response_digest]),
  );
});
