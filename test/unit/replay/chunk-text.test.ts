import { describe, expect, it } from 'vitest';
import { chunkText, MAX_PIECES } from '../../../src/replay/chunk-text.js';

describe('re-chunking stored text for a stream', () => {
  it('cuts windows of 16 characters back to just after whitespace', () => {
    expect(chunkText("It's raining in Paris, 12°C. Take an umbrella.")).toEqual([
      "It's raining in ",
      'Paris, 12°C. ',
      'Take an ',
      'umbrella.',
    ]);
  });

  it('cuts a window with no whitespace at 16 characters', () => {
    expect(chunkText('{"city":"Paris","country":"France"}')).toEqual(['{"city":"Paris",', '"country":"Franc', 'e"}']);
  });

  it('gives back exactly the text when joined, and never splits a surrogate pair', () => {
    const text = `${'🙂'.repeat(40)} ${'x'.repeat(15)}🙂${'y'.repeat(33)}`;
    const pieces = chunkText(text);
    expect(pieces.join('')).toBe(text);
    for (const p of pieces) expect(p).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });

  it('widens the window for long text so a stream stays within a bounded number of pieces', () => {
    const text = 'word '.repeat(100_000);
    const pieces = chunkText(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBeLessThanOrEqual(MAX_PIECES * 1.3);
  });

  it('gives nothing for empty text', () => {
    expect(chunkText('')).toEqual([]);
  });
});
