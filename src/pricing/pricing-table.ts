/**
 * @module pricing/pricing-table
 * The `--pricing FILE` price table (docs/pricing.md): what a model call costs per million tokens.
 *
 * File format (JSON, UTF-8, at most 16 MiB):
 *
 * ```json
 * {
 *   "note": "optional free text, e.g. where the prices were copied from and when",
 *   "models": {
 *     "gpt-4o-2024-08-06": { "input": 2.5,  "output": 10,   "cache_read": 1.25 },
 *     "gpt-4o-mini*":      { "input": 0.15, "output": 0.6,  "cache_read": 0.075 },
 *     "claude-sonnet-4-5*":{ "input": 3,    "output": 15,   "cache_read": 0.3, "cache_write": 3.75 }
 *   }
 * }
 * ```
 *
 * - Every price is US dollars per million tokens: a finite number, 0 or more.
 * - `input` and `output` are required; `cache_read` and `cache_write` are optional (absent or
 *   `null` means "not priced": a call that read or wrote cached tokens then has no known cost).
 * - A key is a model name as spans report it (the response model when recorded, else the
 *   request model), matched exactly. A key ending in `*` is a prefix pattern
 *   (`gpt-4o-mini*` prices `gpt-4o-mini-2024-07-18`); an exact key wins over any pattern and
 *   the longest matching pattern wins over shorter ones. `*` alone prices every model.
 * - Anything else — another top-level key, another key in an entry, a misspelt price — is
 *   refused with an error naming the entry, rather than silently pricing nothing.
 */
import { readFile, stat } from 'node:fs/promises';

export interface ModelPrice {
  /** USD per million uncached input tokens */
  input: number;
  /** USD per million output tokens */
  output: number;
  /** USD per million input tokens read from the provider's prompt cache; null: not priced */
  cache_read: number | null;
  /** USD per million input tokens written to the prompt cache; null: not priced */
  cache_write: number | null;
}

export interface PricingTable {
  /** where the table came from, for messages */
  readonly source: string;
  readonly exact: ReadonlyMap<string, ModelPrice>;
  /** prefix patterns, longest first */
  readonly prefixes: readonly (readonly [string, ModelPrice])[];
}

export class PricingError extends Error {
  constructor(
    readonly source: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`pricing table ${source}: ${message}`, options);
    this.name = 'PricingError';
  }
}

export const MAX_PRICING_FILE_BYTES = 16 * 1024 * 1024;
/** a sanity bound: no model costs a million dollars per million tokens */
const MAX_PRICE_USD = 1_000_000;
const MAX_MODEL_NAME = 256;
const PRICE_KEYS = ['input', 'output', 'cache_read', 'cache_write'] as const;
const TOP_LEVEL_KEYS = new Set(['models', 'note']);

/** Parses and validates a price table; throws PricingError naming the bad entry. */
export function parsePricingTable(text: string, source = 'pricing table'): PricingTable {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (cause) {
    throw new PricingError(source, `is not valid JSON (${(cause as Error).message})`, { cause });
  }
  if (!isPlainObject(root)) {
    throw new PricingError(source, `must be a JSON object {"models": {...}}, got ${kindOf(root)}`);
  }
  for (const key of Object.keys(root)) {
    if (!TOP_LEVEL_KEYS.has(key)) {
      throw new PricingError(
        source,
        `unknown top-level key ${JSON.stringify(key)}; expected "models" (and optionally "note")`,
      );
    }
  }
  if (root.note !== undefined && typeof root.note !== 'string') {
    throw new PricingError(source, `"note" must be a string, got ${kindOf(root.note)}`);
  }
  const models = root.models;
  if (!isPlainObject(models)) {
    throw new PricingError(source, `"models" must be an object mapping model names to prices, got ${kindOf(models)}`);
  }
  const exact = new Map<string, ModelPrice>();
  const prefixes: [string, ModelPrice][] = [];
  for (const [name, entry] of Object.entries(models)) {
    const where = `models[${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)}]`;
    validateName(source, where, name);
    const price = parseEntry(source, where, entry);
    if (name.endsWith('*')) prefixes.push([name.slice(0, -1), price]);
    else exact.set(name, price);
  }
  prefixes.sort((x, y) => y[0].length - x[0].length);
  return { source, exact, prefixes };
}

/** Reads and parses `--pricing FILE`. */
export async function loadPricingFile(file: string): Promise<PricingTable> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (cause) {
    throw new PricingError(file, `cannot be read (${(cause as Error).message})`, { cause });
  }
  if (size > MAX_PRICING_FILE_BYTES) {
    throw new PricingError(file, `is ${size} bytes; a price table may be at most ${MAX_PRICING_FILE_BYTES} bytes`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new PricingError(file, `cannot be read (${(cause as Error).message})`, { cause });
  }
  return parsePricingTable(text, file);
}

/** The price for a model: exact name first, then the longest matching prefix pattern. */
export function priceOf(table: PricingTable, model: string): ModelPrice | null {
  const hit = table.exact.get(model);
  if (hit) return hit;
  for (const [prefix, price] of table.prefixes) {
    if (model.startsWith(prefix)) return price;
  }
  return null;
}

function validateName(source: string, where: string, name: string): void {
  if (name.length === 0) throw new PricingError(source, `${where}: a model name cannot be empty`);
  if (name.length > MAX_MODEL_NAME) {
    throw new PricingError(source, `${where}: a model name may be at most ${MAX_MODEL_NAME} characters`);
  }
  if (name.slice(0, -1).includes('*')) {
    throw new PricingError(source, `${where}: "*" may appear only at the end of a name, as a prefix pattern`);
  }
}

function parseEntry(source: string, where: string, entry: unknown): ModelPrice {
  if (!isPlainObject(entry)) {
    throw new PricingError(source, `${where} must be an object {"input": ..., "output": ...}, got ${kindOf(entry)}`);
  }
  for (const key of Object.keys(entry)) {
    if (!(PRICE_KEYS as readonly string[]).includes(key)) {
      throw new PricingError(
        source,
        `${where}: unknown key ${JSON.stringify(key)}; prices are ${PRICE_KEYS.join(', ')} (USD per million tokens)`,
      );
    }
  }
  const price = (key: (typeof PRICE_KEYS)[number], required: boolean): number | null => {
    const value = entry[key];
    if (value === undefined || value === null) {
      if (required) throw new PricingError(source, `${where}.${key} is required (USD per million tokens)`);
      return null;
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_PRICE_USD) {
      throw new PricingError(
        source,
        `${where}.${key} must be a number from 0 to ${MAX_PRICE_USD} (USD per million tokens), got ${JSON.stringify(value)}`,
      );
    }
    return value;
  };
  return {
    input: price('input', true) as number,
    output: price('output', true) as number,
    cache_read: price('cache_read', false),
    cache_write: price('cache_write', false),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
