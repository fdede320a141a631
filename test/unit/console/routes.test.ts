/**
 * The console's file routes (src/console/routes.ts): the page at `/`, built files under
 * /console/, a Content-Security-Policy on each, nothing outside the build directory, and a
 * clear answer when the console was not built.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleRoutes } from '../../../src/console/routes.js';
import { appWith } from '../../helpers/app.js';

describe('console routes', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-console-'));
    mkdirSync(path.join(dir, 'built', 'assets'), { recursive: true });
    writeFileSync(path.join(dir, 'built', 'index.html'), '<!doctype html><title>tapedeck</title>');
    writeFileSync(path.join(dir, 'built', 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(path.join(dir, 'secret.txt'), 'not served');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the page at / with a policy that allows only this origin', async () => {
    const app = appWith(createConsoleRoutes({ directory: path.join(dir, 'built') }));
    const res = await app.request('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toContain('<title>tapedeck</title>');
  });

  it('answers built files by type, hashed ones cached for good', async () => {
    const app = appWith(createConsoleRoutes({ directory: path.join(dir, 'built') }));
    const res = await app.request('/console/assets/index-abc123.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(await res.text()).toBe('console.log(1)');
  });

  it.each([
    '/console/../secret.txt',
    '/console/%2e%2e/secret.txt',
    '/console/assets/%2e%2e/%2e%2e/secret.txt',
    '/console/assets/missing.js',
    '/console/index.html.map',
    '/console/assets/.hidden.js',
  ])('answers 404 not_found for %s', async (url) => {
    const app = appWith(createConsoleRoutes({ directory: path.join(dir, 'built') }));
    const res = await app.request(url);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('not_found');
  });

  it('says how to build the console when it was not built', async () => {
    const app = appWith(createConsoleRoutes({ directory: path.join(dir, 'nothing-here') }));
    const res = await app.request('/');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('npm run build');
  });
});
