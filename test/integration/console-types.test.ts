/**
 * The console declares the API's answers it reads in console/src/types.ts, a copy the bundle
 * keeps apart from the server's code. Here the real answers of a server holding the corpus's
 * weather runs, every layout's (GET /v1/runs, /v1/tapes/{run} plain and resolved,
 * /v1/runs/{run}/reconstruct and /tree), are read against those declarations: every key a
 * type requires is in every answer object it describes, at every depth, and every optional
 * key turns up in at least one. A field renamed or dropped on either side fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { START_TIMEOUT_MS, startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const TYPES_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'src', 'types.ts');

interface Member {
  optional: boolean;
  type: ts.TypeNode | undefined;
}

/** Each interface of the file: its members, those of what it extends included. */
function declaredShapes(file: string): Map<string, Map<string, Member>> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const declared = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) declared.set(node.name.text, node);
  });
  const shapes = new Map<string, Map<string, Member>>();
  const shapeOf = (name: string): Map<string, Member> => {
    const known = shapes.get(name);
    if (known) return known;
    const node = declared.get(name)!;
    const members = new Map<string, Member>();
    for (const clause of node.heritageClauses ?? []) {
      for (const base of clause.types) for (const [k, m] of shapeOf(base.expression.getText())) members.set(k, m);
    }
    for (const [k, m] of membersOf(node.members)) members.set(k, m);
    shapes.set(name, members);
    return members;
  };
  for (const name of declared.keys()) shapeOf(name);
  return shapes;
}

function membersOf(nodes: ts.NodeArray<ts.TypeElement>): Map<string, Member> {
  const members = new Map<string, Member>();
  for (const m of nodes) {
    if (ts.isPropertySignature(m)) members.set(m.name.getText(), { optional: !!m.questionToken, type: m.type });
  }
  return members;
}

/** Reads `value` against a declared type, recording where a key is missing and which optional keys were seen. */
class ShapeCheck {
  readonly missing: string[] = [];
  readonly optionalSeen = new Set<string>();
  readonly optionalDeclared = new Set<string>();

  constructor(private readonly shapes: Map<string, Map<string, Member>>) {}

  value(value: unknown, type: ts.TypeNode | undefined, where: string): void {
    if (value === null || value === undefined || !type) return;
    if (ts.isArrayTypeNode(type)) {
      if (Array.isArray(value)) value.forEach((v, i) => this.value(v, type.elementType, `${where}[${i}]`));
    } else if (ts.isUnionTypeNode(type)) {
      for (const t of type.types) this.value(value, t, where);
    } else if (ts.isTypeLiteralNode(type)) {
      this.object(value, membersOf(type.members), where, where.replace(/\[\d+\]/g, '[]'));
    } else if (ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && this.shapes.has(type.typeName.text)) {
      this.object(value, this.shapes.get(type.typeName.text)!, where, type.typeName.text);
    }
  }

  object(value: unknown, members: Map<string, Member>, where: string, typeName: string): void {
    if (typeof value !== 'object' || value === null) return;
    for (const [key, member] of members) {
      const id = `${typeName}.${key}`;
      if (member.optional) this.optionalDeclared.add(id);
      if (key in value) {
        if (member.optional) this.optionalSeen.add(id);
        this.value((value as Record<string, unknown>)[key], member.type, `${where}.${key}`);
      } else if (!member.optional) {
        this.missing.push(`${where}.${key} (${id})`);
      }
    }
  }
}

describe('the console’s types', () => {
  let t: TestTapedeck;

  beforeAll(async () => {
    t = await startTestTapedeck('pglite');
    for (const ref of listCaptures().filter((c) => c.scenario === 'weather')) {
      const capture = await loadCapture(ref);
      await ingestSpans(capture.spans, { tenant: '' }, t.running.store.ingest);
      await ingestLogs(capture.logs, { tenant: '' }, t.running.store.ingest);
    }
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await t?.close();
  });

  it('declare only keys the API answers with, as it names and nests them', async () => {
    // arrange
    const shapes = declaredShapes(TYPES_FILE);
    const check = new ShapeCheck(shapes);
    const get = async (route: string) => {
      const answer = await fetch(`${t.url}${route}`);
      expect(answer.status, route).toBe(200);
      return answer.json();
    };
    const reference = (name: string) => ts.factory.createTypeReferenceNode(name);

    // act: every answer the console reads, for every run
    const page = (await get('/v1/runs?limit=500')) as { runs: { run: string }[] };
    check.value(page, reference('RunPage'), 'GET /v1/runs');
    for (const { run } of page.runs) {
      const id = encodeURIComponent(run);
      check.value(await get(`/v1/tapes/${id}`), reference('Tape'), `GET /v1/tapes/${run}`);
      check.value(await get(`/v1/tapes/${id}?resolve=true`), reference('Tape'), `GET /v1/tapes/${run}?resolve=true`);
      check.value(await get(`/v1/runs/${id}/reconstruct`), reference('Reconstruction'), `reconstruct ${run}`);
      check.value(await get(`/v1/runs/${id}/tree`), reference('Tree'), `tree ${run}`);
    }

    // assert
    expect(page.runs.length).toBeGreaterThan(5);
    expect(check.missing).toEqual([]);
    expect([...check.optionalDeclared].filter((id) => !check.optionalSeen.has(id))).toEqual([]);
  }, 120_000);
});
