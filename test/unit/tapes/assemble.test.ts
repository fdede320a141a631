/**
 * tapes/assemble: duplicate model spans collapse, and ties in start time are broken by
 * causality, then end time, then span id (docs/architecture.md "Step order", "One call, two spans").
 */
import { describe, expect, it } from 'vitest';
import { assembleTape } from '../../../src/tapes/assemble.js';
import { row, sid } from '../../helpers/span-builder.js';

describe('assembleTape', () => {
  it('numbers steps from 0 in start order', () => {
    const steps = assembleTape({ steps: [row({ id: 'b', start: 5 }), row({ id: 'a', start: 1 })] });
    expect(steps.map((s) => [s.index, s.name])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ]);
  });

  it('puts an ancestor before its descendant on a tie, even across a context span and when the child ends first', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'llm', parent: 'wrap', start: 0, end: 5 }),
        row({ id: 'agent', kind: 'agent', start: 0, end: 50 }),
      ],
      spans: [{ trace_id: row({ id: 'wrap' }).trace_id, span_id: sid('wrap'), parent_span_id: sid('agent') }],
    });
    expect(steps.map((s) => s.name)).toEqual(['agent', 'llm']);
  });

  it('puts a model answer before the tools it asked for, in the order asked, and those before the call reading them', () => {
    const answer = [
      {
        role: 'assistant',
        tool_calls: [
          { id: 'c1', name: 'w', arguments: { city: 'Paris' } },
          { id: 'c2', name: 'w', arguments: { city: 'Lyon' } },
        ],
      },
    ];
    const followUp = [
      { role: 'tool', tool_call_id: 'c1', content: 1 },
      { role: 'tool', tool_call_id: 'c2', content: 2 },
    ];
    const steps = assembleTape({
      steps: [
        // All four share a start millisecond; the Lyon tool ends first, the follow-up call earlier than the Paris tool's end would say.
        row({ id: 'next', start: 10, end: 11, request: followUp }),
        row({ id: 'lyon', kind: 'tool', tool: 'w', toolCallId: 'c2', start: 10, end: 10 }),
        row({ id: 'paris', kind: 'tool', tool: 'w', toolCallId: 'c1', start: 10, end: 12 }),
        row({ id: 'first', start: 10, end: 13, response: answer }),
      ],
    });
    expect(steps.map((s) => s.name)).toEqual(['first', 'paris', 'lyon', 'next']);
  });

  it('matches tool steps without call ids by tool name and arguments', () => {
    const answer = [
      {
        role: 'assistant',
        tool_calls: [
          { id: 'c1', name: 'w', arguments: { city: 'Paris' } },
          { id: 'c2', name: 'w', arguments: { city: 'Lyon' } },
        ],
      },
    ];
    const steps = assembleTape({
      steps: [
        row({ id: 'lyon', kind: 'tool', tool: 'w', request: { city: 'Lyon' }, start: 3, end: 3 }),
        row({ id: 'paris', kind: 'tool', tool: 'w', request: { city: 'Paris' }, start: 3, end: 4 }),
        row({ id: 'llm', start: 0, end: 2, response: answer }),
      ],
    });
    expect(steps.map((s) => s.name)).toEqual(['llm', 'paris', 'lyon']);
  });

  it('falls back to end time then span id when causality says nothing (an offloaded answer)', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'b', start: 0, end: 3, response: { $payload: 'sha256/00' } }),
        row({ id: 'a', kind: 'tool', tool: 'w', start: 0, end: 3 }),
        row({ id: 'c', kind: 'tool', tool: 'w', start: 0, end: 2 }),
      ],
    });
    expect(steps.map((s) => s.name)).toEqual(['c', 'a', 'b']);
  });

  it('collapses an instrumentation span and the provider SDK span nested in it into one step, keeping the more complete', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'sdk', parent: 'lib', start: 1, status: 'ok', tokens: { input: 10, output: 5, cache_write: 0 } }),
        row({
          id: 'lib',
          start: 0,
          request: [{ role: 'user', content: 'hi' }],
          response: [{ role: 'assistant', content: 'yo' }],
          tokens: { input: 10, output: 5 },
        }),
      ],
    });
    expect(steps).toHaveLength(1);
    expect(steps[0].name).toBe('lib');
    expect(steps[0].status).toBe('ok'); // the SDK span said ok where the instrumentation said nothing
    expect(steps[0].tokens).toMatchObject({ input: 10, output: 5, cache_write: 0 });
  });

  it('keeps the nested span when it is the more complete one', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'outer', start: 0 }),
        row({ id: 'inner', parent: 'outer', start: 1, request: [{ role: 'user', content: 'x' }] }),
      ],
    });
    expect(steps.map((s) => s.name)).toEqual(['inner']);
  });

  it('keeps two nested model calls with different recorded requests', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'outer', start: 0, request: [{ role: 'user', content: 'a' }] }),
        row({ id: 'inner', parent: 'outer', start: 1, request: [{ role: 'user', content: 'b' }] }),
      ],
    });
    expect(steps.map((s) => s.name)).toEqual(['outer', 'inner']);
  });

  it('folds nothing into a model span that encloses several model calls, even one with no recorded request', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'wrapper', start: 0, end: 9 }),
        row({ id: 'call1', parent: 'step1', start: 1, end: 4, request: [{ role: 'user', content: 'a' }] }),
        row({ id: 'sdk1', parent: 'call1', start: 1, end: 4, tokens: { input: 3 } }),
        row({ id: 'call2', parent: 'wrapper', start: 5, end: 8, request: [{ role: 'user', content: 'b' }] }),
        row({ id: 'sdk2', parent: 'call2', start: 5, end: 8, tokens: { input: 4 } }),
      ],
      // the first call sits under a context span of the wrapper
      spans: [{ trace_id: row({ id: 'step1' }).trace_id, span_id: sid('step1'), parent_span_id: sid('wrapper') }],
    });
    expect(steps.map((s) => [s.name, s.tokens.input])).toEqual([
      ['wrapper', null],
      ['call1', 3],
      ['call2', 4],
    ]);
  });

  it('folds a chain of one-to-one spans (three instrumentations of one call) into its most complete', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'framework', start: 0, end: 9 }),
        row({ id: 'library', parent: 'framework', start: 1, end: 8, request: [{ role: 'user', content: 'a' }] }),
        row({ id: 'sdk', parent: 'library', start: 2, end: 7, tokens: { input: 3 } }),
      ],
    });
    expect(steps.map((s) => [s.name, s.tokens.input])).toEqual([['library', 3]]);
  });

  it('never drops a step on contradictory input (a parent cycle)', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'a', parent: 'b', kind: 'tool', start: 0 }),
        row({ id: 'b', parent: 'a', kind: 'tool', start: 0 }),
      ],
    });
    expect(steps.map((s) => s.name).sort()).toEqual(['a', 'b']);
  });

  it('ends a walk up from a model step that comes back to it through a context span', () => {
    const steps = assembleTape({
      steps: [
        row({ id: 'a', parent: 'ctx', start: 0, request: [{ role: 'user', content: 'a' }] }),
        row({ id: 'b', parent: 'a', start: 1, request: [{ role: 'user', content: 'b' }] }),
      ],
      spans: [{ trace_id: row({ id: 'ctx' }).trace_id, span_id: sid('ctx'), parent_span_id: sid('a') }],
    });
    expect(steps.map((s) => s.name)).toEqual(['a', 'b']);
  });

  it('orders thousands of steps sharing one start time (a coarse clock) by ancestry', () => {
    const many = Array.from({ length: 5000 }, (_, i) =>
      row({ id: `s${i}`, kind: 'tool', tool: 'w', parent: i ? `s${i - 1}` : null, start: 0, end: 5000 - i }),
    );
    const steps = assembleTape({ steps: many });
    expect(steps[0].name).toBe('s0'); // ancestors first despite ending last
    expect(steps[4999].name).toBe('s4999');
  });
});
