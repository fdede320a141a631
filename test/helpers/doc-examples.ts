/**
 * Test helper: the worked examples of a document in docs/, so a test runs each one and
 * checks that its answer is the one written down. An example is a fenced block whose info
 * string names its role after the language (```json mcp-call, ```text mcp-result), in the
 * order the document shows them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../src/package-root.js';

export interface DocBlock {
  /** the word after the language: mcp-call, mcp-result, ... */
  role: string;
  text: string;
  /** 1-based line of the opening fence, for messages */
  line: number;
}

export function docBlocks(doc: string): DocBlock[] {
  const lines = readFileSync(path.join(packageRoot(), doc), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```\w*\s+([\w-]+)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${doc}:${i + 1}: unclosed fence`);
    blocks.push({ role: open[1], text: lines.slice(i + 1, end).join('\n'), line: i + 1 });
    i = end;
  }
  return blocks;
}
