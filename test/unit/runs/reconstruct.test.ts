import { describe, expect, it } from 'vitest';
import { reconstructRun } from '../../../src/runs/reconstruct.js';
import { answer, callWeather, llm, step, tape, tool, toolResult, SYSTEM, USER } from './steps.js';

const PARIS = { city: 'Paris', temperature_c: 18 };

describe('reconstructRun', () => {
  it('takes the prompt of the first model call, the text of the last answer and the tool steps', () => {
    const rec = reconstructRun(
      tape([
        step('agent'),
        llm([SYSTEM, USER], [callWeather('c1')]),
        tool('get_weather', { city: 'Paris' }, PARIS),
        llm([SYSTEM, USER, callWeather('c1'), toolResult('c1', PARIS)], [answer('Sunny.')]),
      ]),
      { parent_run: 'parent', outcome: 'success' },
    );
    expect(rec).toMatchObject({
      run: 'run-1',
      parent_run: 'parent',
      outcome: 'success',
      status: 'complete',
      model: 'gpt-4o-mini',
      model_calls: 2,
      input: [SYSTEM, USER],
      output: 'Sunny.',
      tool_calls: [
        {
          id: 'c1',
          name: 'get_weather',
          arguments: { city: 'Paris' },
          result: PARIS,
          status: 'ok',
          source: 'tool_step',
        },
      ],
      start_ns: 0n,
      end_ns: 31_000_000n,
    });
  });

  it('rebuilds tool calls from the answers and the results sent back when no tool step recorded them', () => {
    const rec = reconstructRun(
      tape([
        llm(
          [USER],
          [
            {
              role: 'assistant',
              tool_calls: [
                { id: 'a', name: 'get_weather', arguments: { city: 'Paris' } },
                { id: 'b', name: 'get_weather', arguments: { city: 'Lyon' } },
              ],
            },
          ],
        ),
        llm([USER, toolResult('a', 'rainy'), toolResult('b', 'sunny')], [answer('Go to Lyon.')]),
      ]),
    );
    expect(rec.tool_calls).toEqual([
      {
        id: 'a',
        name: 'get_weather',
        arguments: { city: 'Paris' },
        result: 'rainy',
        status: null,
        source: 'model_messages',
      },
      {
        id: 'b',
        name: 'get_weather',
        arguments: { city: 'Lyon' },
        result: 'sunny',
        status: null,
        source: 'model_messages',
      },
    ]);
  });

  it('matches tool steps without ids to the calls the model asked for, by name, in order', () => {
    const rec = reconstructRun(
      tape([
        llm(
          [USER],
          [
            {
              role: 'assistant',
              tool_calls: [
                { id: 'a', name: 'get_weather', arguments: {} },
                { id: 'b', name: 'get_time', arguments: {} },
                { id: 'c', name: 'get_weather', arguments: {} },
              ],
            },
          ],
        ),
        tool('get_weather', { city: 'Paris' }, 'rain'),
        tool('get_weather', { city: 'Lyon' }, 'sun'),
        llm([USER, toolResult('a', 'rain'), toolResult('b', '12:00'), toolResult('c', 'sun')], [answer('ok')]),
      ]),
    );
    // The tool step's own arguments win over the model's ({} when streaming lost them);
    // get_time has no tool step: it comes from the messages, after the call before it.
    expect(rec.tool_calls.map((c) => [c.id, c.name, c.arguments, c.result, c.source])).toEqual([
      ['a', 'get_weather', { city: 'Paris' }, 'rain', 'tool_step'],
      ['b', 'get_time', {}, '12:00', 'model_messages'],
      ['c', 'get_weather', { city: 'Lyon' }, 'sun', 'tool_step'],
    ]);
  });

  it('counts a call recorded in two answers (one model call, two spans) once', () => {
    const rec = reconstructRun(
      tape([llm([USER], [callWeather('c1')]), llm([USER], [callWeather('c1')]), tool('get_weather', {}, 'x')]),
    );
    expect(rec.tool_calls.map((c) => c.id)).toEqual(['c1']);
  });

  it('says error when the last model call failed, and gives no answer', () => {
    const rec = reconstructRun(
      tape([llm([USER], [callWeather('c1')]), tool('get_weather', {}, 'x'), llm([USER], null, { status: 'error' })]),
    );
    expect([rec.status, rec.output]).toEqual(['error', null]);
  });

  it('says error when the agent that encloses the run failed, or the run outcome is failure', () => {
    const agent = step('agent', { status: 'error' });
    const inner = llm([USER], [answer('hi')], { parent_span_id: agent.span_id });
    expect(reconstructRun(tape([agent, inner])).status).toBe('error');
    const nested = step('agent', { status: 'error', parent_span_id: agent.span_id });
    expect(reconstructRun(tape([{ ...agent, status: 'ok' }, nested, inner])).status).toBe('complete');
    expect(reconstructRun(tape([llm([USER], [answer('hi')])]), { parent_run: null, outcome: 'failure' }).status).toBe(
      'error',
    );
  });

  it('says cancelled when the run stopped after asking for tools, with no answer', () => {
    const asked = reconstructRun(
      tape([
        llm(
          [USER],
          [
            {
              role: 'assistant',
              content: 'Let me check.',
              tool_calls: [{ id: 'c', name: 'get_weather', arguments: {} }],
            },
          ],
        ),
      ]),
    );
    expect([asked.status, asked.output]).toEqual(['cancelled', null]);
    // Content capture off: nothing says what the answer was, but a tool ran after it.
    expect(reconstructRun(tape([llm(null, null), tool('get_weather', null, null)])).status).toBe('cancelled');
    expect(reconstructRun(tape([llm(null, null)])).status).toBe('complete');
  });

  it('says truncated when the tape was cut or content stayed offloaded', () => {
    expect(reconstructRun(tape([llm([USER], [answer('x')])], { truncated: true })).status).toBe('truncated');
    const ref = { $payload: `sha256/${'0'.repeat(64)}` };
    const rec = reconstructRun(tape([step('llm', { request: ref, response: [answer('x')] as never })]));
    expect([rec.status, rec.input]).toEqual(['truncated', null]);
  });

  it('gives a JSON-shaped answer as compact JSON text and joins several answer messages', () => {
    expect(reconstructRun(tape([llm([USER], [{ role: 'assistant', content: { a: 1 } }])])).output).toBe('{"a":1}');
    expect(reconstructRun(tape([llm([USER], [answer('a'), answer('b')])])).output).toBe('ab');
  });

  it('reconstructs a run without model calls as complete with nothing to show', () => {
    const rec = reconstructRun(tape([tool('lookup', { q: 1 }, 2)]));
    expect(rec).toMatchObject({ status: 'complete', input: null, output: null, model_calls: 0, model: null });
    expect(rec.tool_calls).toHaveLength(1);
  });
});
