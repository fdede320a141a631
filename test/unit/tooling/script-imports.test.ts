/**
 * The benches and scripts are plain JavaScript run against the build (`dist/`), outside the
 * type check: an import of a module or name the source no longer has would only show when
 * someone runs them. Every relative import they make names a file that exists (for `dist/`,
 * its TypeScript source) and, where it names what it takes, a name that file exports.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const scripts = ['bench', 'bench/lib', 'scripts'].flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => join(root, dir, f)),
);

/** The file an import names: a build output is checked by its source. */
function sourceOf(from: string, specifier: string): string {
  const target = resolve(dirname(from), specifier);
  const built = relative(join(root, 'dist'), target);
  return built.startsWith('..') ? target : join(root, built.replace(/\.js$/, '.ts'));
}

function exportsName(source: string, name: string): boolean {
  const text = readFileSync(source, 'utf8');
  const declared = new RegExp(`export\\s+(?:async\\s+)?(?:function\\*?|const|let|class|type|interface)\\s+${name}\\b`);
  const listed = /export\s*(?:type\s*)?\{([^}]*)\}/g;
  if (declared.test(text)) return true;
  for (const [, list] of text.matchAll(listed)) {
    if (
      list.split(',').some(
        (entry) =>
          entry
            .trim()
            .split(/\s+as\s+/)
            .at(-1) === name,
      )
    )
      return true;
  }
  return false;
}

describe('the benches and scripts', () => {
  it('are found', () => {
    expect(scripts.length).toBeGreaterThan(10);
  });

  it.each(scripts.map((file) => [relative(root, file), file]))('%s imports what exists', (_, file) => {
    const text = readFileSync(file, 'utf8');
    const imports = [...text.matchAll(/import\s*(?:\{([^}]*)\}\s*from\s*)?(?:[\w*\s,]+from\s*)?'(\.{1,2}\/[^']+)'/g)];
    const missing: string[] = [];
    for (const [, names, specifier] of imports) {
      const source = sourceOf(file, specifier);
      if (!existsSync(source)) {
        missing.push(specifier);
        continue;
      }
      for (const entry of (names ?? '').split(',')) {
        const name = entry
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0];
        if (name && !exportsName(source, name)) missing.push(`${name} from ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
