import { describe, expect, it } from 'vitest';
import { accessFor, OPEN_ACCESS, withNamedTenant } from '../../../src/auth/access.js';
import { parseTokenEntries, roleAllows, secretDigest, TokenListError } from '../../../src/auth/credential.js';

describe('TAPEDECK_TOKENS entries', () => {
  it('reads name:secret:role[:tenant], comma- or line-separated, keeping only digests', () => {
    const tokens = parseTokenEntries(
      'ops:aaaaaaaaaaaaaaaaaaaa:admin, ci:bbbbbbbbbbbbbbbbbbbb:rw:acme\n# a comment\n\nviewer:cccccccccccccccccccc:ro:acme',
      'TAPEDECK_TOKENS',
    );
    expect(tokens.map((t) => t.credential)).toEqual([
      { name: 'ops', role: 'admin', tenant: null, source: 'configured', id: null },
      { name: 'ci', role: 'rw', tenant: 'acme', source: 'configured', id: null },
      { name: 'viewer', role: 'ro', tenant: 'acme', source: 'configured', id: null },
    ]);
    expect(tokens[1].digest.equals(secretDigest('bbbbbbbbbbbbbbbbbbbb'))).toBe(true);
    expect(JSON.stringify(tokens.map((t) => t.credential))).not.toContain('bbbb');
  });

  it.each([
    ['ops:short:admin', /at least 16 characters/],
    ['ops:aaaaaaaaaaaaaaaaaaaa:root', /role must be ro, rw or admin/],
    ['ops:aaaaaaaaaaaaaaaaaaaa', /expected name:secret:role/],
    ['o ps:aaaaaaaaaaaaaaaaaaaa:ro', /a name is/],
    ['ops:aaaaaaaaaaaaaaaaaaaa:ro:bad tenant', /a tenant is/],
    ['a:aaaaaaaaaaaaaaaaaaaa:ro,a:bbbbbbbbbbbbbbbbbbbb:ro', /used twice/],
    ['a:aaaaaaaaaaaaaaaaaaaa:ro,b:aaaaaaaaaaaaaaaaaaaa:rw', /same secret is used twice/],
  ])('refuses %s, naming the problem and never the secret', (text, message) => {
    let caught: unknown;
    try {
      parseTokenEntries(text, 'TAPEDECK_TOKENS');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TokenListError);
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain('aaaaaaaa');
  });

  it('orders roles ro < rw < admin', () => {
    expect(roleAllows('ro', 'rw')).toBe(false);
    expect(roleAllows('rw', 'rw')).toBe(true);
    expect(roleAllows('admin', 'rw')).toBe(true);
    expect(roleAllows('rw', 'admin')).toBe(false);
  });
});

describe('a request tenant', () => {
  const bound = accessFor({ name: 'v', role: 'ro', tenant: 'acme', source: 'configured', id: null });
  const unbound = accessFor({ name: 'w', role: 'rw', tenant: null, source: 'configured', id: null });
  const admin = accessFor({ name: 'a', role: 'admin', tenant: null, source: 'configured', id: null });

  it('is the credential tenant, else the default tenant', () => {
    expect(bound).toMatchObject({ tenant: 'acme', operator: false });
    expect(unbound).toMatchObject({ tenant: '', operator: false });
    expect(admin).toMatchObject({ tenant: '', operator: true });
    expect(OPEN_ACCESS).toMatchObject({ tenant: '', operator: true });
  });

  it('may be named by an operator; naming a foreign tenant otherwise is not found', () => {
    expect(withNamedTenant(admin, 'globex').tenant).toBe('globex');
    expect(withNamedTenant(bound, 'acme').tenant).toBe('acme');
    expect(() => withNamedTenant(bound, 'globex')).toThrow(expect.objectContaining({ type: 'not_found' }));
    expect(() => withNamedTenant(unbound, 'acme')).toThrow(expect.objectContaining({ type: 'not_found' }));
    expect(() => withNamedTenant(admin, 'no spaces')).toThrow(expect.objectContaining({ type: 'bad_input' }));
  });
});
