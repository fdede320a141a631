/**
 * @module normalize/python-literal
 * Reads the `repr()` of a plain Python value (dict, list, tuple, str, int, float, True, False,
 * None) as JSON. LangChain hands a tool's arguments to its tracers as `str(tool_input)`, so
 * openinference-instrumentation-langchain records a structured tool input as "{'city': 'Paris'}".
 * Anything else (an object repr, bytes, a set) is not read: undefined.
 */
import type { JsonValue } from '../json/json-value.js';

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '0': '\0',
  b: '\b',
  f: '\f',
};

class Reader {
  i = 0;
  constructor(readonly s: string) {}

  ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  value(): JsonValue {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.dict();
    if (c === '[' || c === '(') return this.list(c === '[' ? ']' : ')');
    if (c === "'" || c === '"') return this.string();
    const m = /^(True|False|None|-?\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(this.s.slice(this.i));
    if (!m) throw new Error('not a literal');
    this.i += m[0].length;
    return m[0] === 'True' ? true : m[0] === 'False' ? false : m[0] === 'None' ? null : Number(m[0]);
  }

  items(close: string, item: () => void): void {
    this.i++;
    for (;;) {
      this.ws();
      if (this.s[this.i] === close) {
        this.i++;
        return;
      }
      item();
      this.ws();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== close) throw new Error('expected separator');
    }
  }

  dict(): JsonValue {
    const out: { [k: string]: JsonValue } = {};
    this.items('}', () => {
      const key = this.value();
      if (typeof key !== 'string' && typeof key !== 'number') throw new Error('key');
      this.ws();
      if (this.s[this.i++] !== ':') throw new Error('expected colon');
      out[String(key)] = this.value();
    });
    return out;
  }

  list(close: string): JsonValue {
    const out: JsonValue[] = [];
    this.items(close, () => out.push(this.value()));
    return out;
  }

  string(): string {
    const quote = this.s[this.i++];
    let out = '';
    while (this.i < this.s.length) {
      const c = this.s[this.i++];
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.s[this.i++];
      if (e === 'x' || e === 'u') {
        const n = e === 'x' ? 2 : 4;
        const hex = this.s.slice(this.i, this.i + n);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== n) throw new Error('escape');
        out += String.fromCharCode(parseInt(hex, 16));
        this.i += n;
      } else if (e !== undefined && e in ESCAPES) out += ESCAPES[e];
      else throw new Error('escape');
    }
    throw new Error('unterminated string');
  }
}

/** A Python dict or list repr as JSON, or undefined when the text is not one. */
export function readPythonLiteral(text: string): JsonValue | undefined {
  const t = text.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return undefined;
  try {
    const r = new Reader(t);
    const v = r.value();
    r.ws();
    return r.i === t.length ? v : undefined;
  } catch {
    return undefined;
  }
}
