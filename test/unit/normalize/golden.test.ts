/**
 * Golden files: each layout's edge cases (golden-cases.ts) normalized and finished, rendered
 * with renderJson (sorted keys, exact bigint). Write the test as if the file exists; create
 * or regenerate with UPDATE_GOLDEN=1 and review the diff (OTel Collector contrib pkg/golden).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GOLDEN_CASES } from './golden-cases.js';
import { normalizeSpan, NORMALIZER_VERSION } from '../../../src/normalize/normalize.js';
import { finishStep } from '../../../src/normalize/finish.js';
import { renderJson } from '../../../src/json/canonical.js';
import { logsBySpan } from '../../helpers/tapes.js';

const GOLDEN_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'golden', 'normalize');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

describe.each(GOLDEN_CASES)('$layout-$name', (c) => {
  it('normalizes to its golden steps', () => {
    const logsOf = logsBySpan(c.logs ?? []);
    const rendered = `${renderJson(
      {
        normalizer_version: NORMALIZER_VERSION,
        spans: c.spans.map((s) => {
          const facts = normalizeSpan(s, logsOf.get(`${s.traceId}/${s.spanId}`) ?? []);
          return {
            span: s.name,
            own_run: facts.ownRun,
            parent_run: facts.parentRun,
            step: facts.step && finishStep(facts.step),
          };
        }),
      },
      2,
    )}\n`;
    const file = path.join(GOLDEN_DIR, `${c.layout}-${c.name}.steps.json`);
    if (UPDATE || !existsSync(file)) {
      if (!UPDATE) throw new Error(`missing golden file ${file}: run with UPDATE_GOLDEN=1 and review it`);
      mkdirSync(GOLDEN_DIR, { recursive: true });
      writeFileSync(file, rendered);
    }
    expect(rendered).toBe(readFileSync(file, 'utf8'));
  });
});
