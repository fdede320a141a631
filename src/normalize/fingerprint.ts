/**
 * @module normalize/fingerprint
 * `kind:name#<first 16 hex of the request digest>`, where name is the model for llm steps,
 * the tool name for tool steps and the agent name for agent steps. A step whose request was
 * not recorded (content capture off) has no digest; its fingerprint ends in `#` followed by
 * nothing, so it can never collide with a recorded request.
 */
import type { StepDraft } from './step.js';

export function fingerprintOf(draft: Pick<StepDraft, 'kind' | 'name' | 'model' | 'tool'>, requestDigest: string | null): string {
  const name = (draft.kind === 'llm' ? draft.model : draft.kind === 'tool' ? draft.tool : null) ?? draft.name;
  return `${draft.kind}:${name}#${requestDigest ? requestDigest.slice(0, 16) : ''}`;
}
