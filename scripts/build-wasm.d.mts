/** The module ascii-words.wat compiles to (scripts/build-wasm.mjs). */
export function compileAsciiWords(): Promise<Buffer>;
