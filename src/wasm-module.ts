/**
 * @module wasm-module
 * Compiling tapedeck's WebAssembly modules (recall/ascii-words.wat, json/json-string.wat, whose
 * bytes are committed as base64), for the modules that drive them. Each has a JavaScript path
 * doing the same work, taken where a module does not compile here.
 */

// The little of the WebAssembly API used here (the Node types in use do not declare it).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
};

/** The compiled module of these base64 bytes; null where it does not compile (no WebAssembly, or not its features). */
export function compileWasm(base64: string): object | null {
  try {
    return new WebAssembly.Module(Buffer.from(base64, 'base64'));
  } catch {
    return null;
  }
}

/** A new instance of a compiled module, its exports as E. */
export function instantiateWasm<E>(module: object): E {
  return new WebAssembly.Instance(module).exports as E;
}
