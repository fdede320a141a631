/** The bytes a module's .wat compiles to (scripts/build-wasm.mjs). */
export function compileWat(name: 'ascii-words' | 'json-string'): Promise<Buffer>;
/** The module ascii-words.wat compiles to. */
export function compileAsciiWords(): Promise<Buffer>;
