/**
 * @module console/routes
 * The web console's files: `GET /` answers its page, `GET /console/…` its built scripts and
 * styles (dist/console, written by `npm run build` from console/). The page reads everything
 * it shows from the documented HTTP API in the browser; nothing here reads the store.
 * Every answer carries a Content-Security-Policy that allows only this origin's scripts and
 * styles, so stored content that reached the page as markup could still run nothing.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Hono } from 'hono';
import { allow } from '../auth/route-auth.js';
import { ApiError } from '../errors.js';
import { packageRoot } from '../package-root.js';

/** Where the built console's files are served from: `/console/<file>`. */
export const CONSOLE_ASSET_PATH = '/console';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

const SECURITY_HEADERS = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export interface ConsoleSettings {
  /** the built console (default: dist/console under the package root) */
  directory?: string;
}

export function createConsoleRoutes(settings: ConsoleSettings = {}): Hono {
  const directory = settings.directory ?? path.join(packageRoot(), 'dist', 'console');
  const app = new Hono();

  // The page and its assets hold no stored data (the console reads it through the API,
  // which checks the credential): anyone may load them.
  app.get('/', allow.public, async () => {
    const page = await readBuilt(directory, 'index.html');
    return new Response(page, {
      headers: { 'content-type': CONTENT_TYPES['.html'], 'cache-control': 'no-cache', ...SECURITY_HEADERS },
    });
  });

  app.get(`${CONSOLE_ASSET_PATH}/*`, allow.public, async (c) => {
    const relative = decodeURIComponent(c.req.path.slice(CONSOLE_ASSET_PATH.length + 1));
    const type = CONTENT_TYPES[path.extname(relative)];
    // Only the files the build wrote: no dot segments, no other directories' files.
    if (!type || relative.split('/').some((part) => part === '' || part.startsWith('.'))) {
      throw new ApiError('not_found', 'no such console file');
    }
    const bytes = await readBuilt(directory, relative);
    // Built names carry a content hash (assets/…-<hash>.js), so they never change.
    const cache = relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    return new Response(bytes, { headers: { 'content-type': type, 'cache-control': cache, ...SECURITY_HEADERS } });
  });

  return app;
}

async function readBuilt(directory: string, relative: string): Promise<Uint8Array> {
  try {
    return await readFile(path.join(directory, relative));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (relative === 'index.html') {
      throw new ApiError('not_found', 'the console is not built here: run `npm run build` (npm start does it)');
    }
    throw new ApiError('not_found', 'no such console file');
  }
}
