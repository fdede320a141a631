/**
 * @module replay/chunk-text
 * No instrumentation records how a provider chunked its stream, so a replayed stream is cut
 * from the stored text: windows of 16 characters (wider for long text, so a long answer does
 * not become tens of thousands of events), each cut back to just after its last whitespace.
 * Joining the pieces gives back exactly the text; a surrogate pair is never split.
 */

export const BASE_WINDOW_CHARS = 16;
/** Past this many pieces the window widens. */
export const MAX_PIECES = 4096;

function isWhitespace(code: number): boolean {
  return (
    code === 0x20 ||
    code === 0x0a ||
    code === 0x09 ||
    code === 0x0d ||
    code === 0x0c ||
    code === 0x0b ||
    code === 0xa0 ||
    code === 0x3000 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029
  );
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function windowFor(length: number): number {
  return Math.max(BASE_WINDOW_CHARS, Math.ceil(length / MAX_PIECES));
}

export function chunkText(text: string): string[] {
  const window = windowFor(text.length);
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    if (text.length - start <= window) {
      pieces.push(text.slice(start));
      break;
    }
    let end = start + window;
    for (let i = end - 1; i > start; i--) {
      if (isWhitespace(text.charCodeAt(i))) {
        end = i + 1;
        break;
      }
    }
    if (isHighSurrogate(text.charCodeAt(end - 1))) end = end - 1 > start ? end - 1 : end + 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
