/**
 * The console's only door to tapedeck: the documented HTTP API (docs/api.md), on the origin
 * that served the page. A token entered in the header form is kept in sessionStorage (gone
 * when the tab closes) and sent as `Authorization: Bearer …` on every call.
 */

const TOKEN_KEY = 'tapedeck.token';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** Listeners told when the API answers 401 (the header shows its token form). */
const unauthorizedListeners: (() => void)[] = [];
export function onUnauthorized(listener: () => void): void {
  unauthorizedListeners.push(listener);
}

export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = storedToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!res.ok) {
    if (res.status === 401) for (const listener of unauthorizedListeners) listener();
    const error = (body as { error?: { type?: string; message?: string } } | null)?.error;
    throw new ApiFailure(res.status, error?.type ?? 'unknown', error?.message ?? `HTTP ${res.status}`, body);
  }
  return body as T;
}

/** A run id as one path segment (docs/api.md, Run ids). */
export const runPath = (run: string) => encodeURIComponent(run);
