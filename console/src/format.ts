/** Figures as people read them. Times arrive as JSON numbers (ns, rounded by JSON.parse: fine for display). */

export function duration(ns: number | null | undefined): string {
  if (ns === null || ns === undefined) return '—';
  const ms = ns / 1e6;
  if (ms < 1) return `${(ns / 1e3).toFixed(0)} µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  return `${(s / 60).toFixed(1)} min`;
}

export function when(ns: number | null | undefined): string {
  if (ns === null || ns === undefined) return '—';
  const d = new Date(ns / 1e6);
  return Number.isNaN(d.getTime())
    ? '—'
    : d
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z');
}

export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString('en');
}

export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n === 0) return '$0';
  return n < 0.01 ? `$${n.toPrecision(3)}` : `$${n.toFixed(4)}`;
}

export function tokens(t: { input: number | null; output: number | null } | null | undefined): string {
  if (!t || (t.input === null && t.output === null)) return '—';
  return `${count(t.input)} in / ${count(t.output)} out`;
}

/** A value for reading: text as it is, JSON (and JSON-shaped text) indented. */
export function pretty(value: unknown): string {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if ((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))) {
      try {
        return JSON.stringify(JSON.parse(trimmed), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  return JSON.stringify(value, null, 2) ?? 'null';
}
