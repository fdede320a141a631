/**
 * @module recall/query-terms
 * A recall query's text as the terms to look for, or 400 bad_input saying why it cannot be
 * searched. Shared by GET /v1/recall and `tapedeck recall`.
 */
import { ApiError } from '../errors.js';
import { MAX_TOKEN_CHARS, queryTerms, type Term } from './tokenize.js';

export const MAX_QUERY_CHARS = 1024;

export function parseTerms(q: string | undefined, maxTerms: number): Term[] {
  if (q === undefined || q.trim() === '') {
    throw badInput('missing q: GET /v1/recall?q=<words> finds earlier runs whose recorded text holds every word');
  }
  if (q.length > MAX_QUERY_CHARS)
    throw badInput(`q is ${q.length} characters long; a recall query has at most ${MAX_QUERY_CHARS}`);
  const terms = queryTerms(q);
  if (terms.length === 0) throw badInput(`q ${JSON.stringify(q)} holds no words (letters or digits) to look for`);
  if (terms.length > maxTerms)
    throw badInput(`q holds ${terms.length} different words; a recall query has at most ${maxTerms}`);
  const long = terms.find((t) => t.kind === 'word' && t.text.length > MAX_TOKEN_CHARS);
  if (long) {
    throw badInput(
      `the word ${JSON.stringify(long.text.slice(0, 40))}… is ${long.text.length} characters long; ` +
        `words longer than ${MAX_TOKEN_CHARS} are not indexed, so recall cannot find them`,
    );
  }
  return terms;
}

function badInput(message: string): ApiError {
  return new ApiError('bad_input', message);
}
