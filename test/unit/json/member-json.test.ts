/**
 * memberJson (src/json/json-string.ts) keeps the JSON of the member names it meets, for
 * canonical JSON and span rows; the names are the sender's, so what it keeps is bounded:
 * short names only, and at most MEMBER_NAMES of them. (A file of its own: the kept names are
 * the module's, and other files' tests fill them.)
 */
import { describe, expect, it } from 'vitest';
import {
  jsonString,
  keptMemberNames,
  MEMBER_NAME_CHARS,
  MEMBER_NAMES,
  memberJson,
} from '../../../src/json/json-string.js';

describe('memberJson', () => {
  it("gives a name's JSON and colon, kept or not", () => {
    for (const key of ['role', 'a"b', 'é', '\u0001', '__proto__', '', 'x'.repeat(MEMBER_NAME_CHARS + 1)]) {
      for (let i = 0; i < 2; i++) expect(memberJson(key)).toBe(`${jsonString(key)}:`);
    }
  });

  it('keeps short names only, and no more than MEMBER_NAMES', () => {
    const before = keptMemberNames();
    for (let i = 0; i < 50; i++) memberJson(`${'n'.repeat(MEMBER_NAME_CHARS)}${i}`);
    expect(keptMemberNames()).toBe(before);
    for (let i = 0; i < MEMBER_NAMES + 10; i++) memberJson(`m${i}`);
    expect(keptMemberNames()).toBe(MEMBER_NAMES);
  });
});
