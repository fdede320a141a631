/**
 * The request checks every guarded route gets before its credential is looked at: Host and
 * Origin must name an allowed host (a page that rebinds its DNS name to 127.0.0.1 cannot read
 * through a visitor's browser), and a POST must be application/json. Also the open-server
 * rule and what the start banner says.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../src/api/app.js';
import { isLoopbackAddress } from '../../../src/auth/configured-tokens.js';
import { allow } from '../../../src/auth/route-auth.js';
import { authLine } from '../../../src/cli/serve.js';
import { loadConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/logger.js';

function openApp(allowedHosts: string[] | '*' = []) {
  const routes = new Hono();
  routes.get('/v1/runs', allow.read, (c) => c.json({ runs: [] }));
  routes.post('/v1/replays', allow.replay, (c) => c.json({ created: true }, 201));
  return createApp({
    routes: [routes],
    ready: async () => ({ ok: true }),
    logger: silentLogger(),
    auth: { credentials: null, settings: { allowedHosts } },
  });
}

describe('Host and Origin', () => {
  it.each([
    ['127.0.0.1:4318', 200],
    ['localhost:4318', 200],
    ['[::1]:4318', 200],
    ['app.localhost', 200],
    ['attacker.example:4318', 403],
    ['127.0.0.1.attacker.example', 403],
  ])('Host %s is answered %i', async (host, status) => {
    const res = await openApp().request('/v1/runs', { headers: { host } });
    expect(res.status).toBe(status);
    if (status === 403) expect(await res.text()).toContain('--allowed-hosts');
  });

  it('refuses an Origin that is not allowed even when Host is', async () => {
    const res = await openApp().request('/v1/runs', {
      headers: { host: '127.0.0.1:4318', origin: 'http://attacker.example' },
    });
    expect(res.status).toBe(403);
    const ok = await openApp().request('/v1/runs', {
      headers: { host: '127.0.0.1:4318', origin: 'http://localhost:3000' },
    });
    expect(ok.status).toBe(200);
  });

  it('takes the configured names, and * for any', async () => {
    const named = openApp(['tapedeck.example.com']);
    expect((await named.request('/v1/runs', { headers: { host: 'tapedeck.example.com' } })).status).toBe(200);
    expect((await named.request('/v1/runs', { headers: { host: 'other.example.com' } })).status).toBe(403);
    expect((await openApp('*').request('/v1/runs', { headers: { host: 'other.example.com' } })).status).toBe(200);
    expect(loadConfig({ TAPEDECK_ALLOWED_HOSTS: 'A.example, b.example' }).allowedHosts).toEqual([
      'a.example',
      'b.example',
    ]);
  });

  it('leaves the probes to any Host (orchestrators probe by address)', async () => {
    const res = await openApp().request('/healthz', { headers: { host: '10.1.2.3:4318' } });
    expect(res.status).toBe(200);
  });
});

describe('POST bodies', () => {
  it.each([
    ['application/json', 201],
    ['application/json; charset=utf-8', 201],
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    [null, 415],
  ])('Content-Type %s is answered %i', async (type, status) => {
    const res = await openApp().request('/v1/replays', {
      method: 'POST',
      headers: type ? { 'content-type': type } : {},
      body: '{"run":"r"}',
    });
    expect(res.status).toBe(status);
  });
});

describe('the open-server rule', () => {
  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost']) expect(isLoopbackAddress(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'tapedeck']) expect(isLoopbackAddress(h)).toBe(false);
  });

  it('says at start whether the server is open, and where', () => {
    expect(authLine(false, '0.0.0.0')).toMatch(/^credentials required/);
    expect(authLine(true, '127.0.0.1')).toMatch(/^OPEN: /);
    expect(authLine(true, '0.0.0.0')).toMatch(/^OPEN \(--allow-open\).*0\.0\.0\.0/);
  });

  it('reads --allow-open and TAPEDECK_ALLOW_OPEN as a switch', () => {
    expect(loadConfig({}).allowOpen).toBe(false);
    expect(loadConfig({ TAPEDECK_ALLOW_OPEN: '1' }).allowOpen).toBe(true);
    expect(loadConfig({}, { allowOpen: 'on' }).allowOpen).toBe(true);
  });
});
