/** The API's answers, as far as the console reads them (docs/api.md). */

export type Outcome = 'success' | 'failure' | 'unknown';

export interface RunSummary {
  run: string;
  parent_run: string | null;
  steps: number;
  llm_steps: number;
  tool_steps: number;
  agent_steps: number;
  errors: number;
  tokens: { input: number | null; output: number | null; cache_read: number | null; cache_write: number | null };
  cost_usd: number | null;
  first_start_ns: number;
  last_end_ns: number;
  duration_ns: number;
  service: string | null;
  outcome: Outcome;
}

export interface RunPage {
  runs: RunSummary[];
  next_cursor: string | null;
}

export interface ToolCall {
  id?: string;
  name: string;
  arguments?: unknown;
}

export interface Message {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  finish_reason?: string;
}

export interface Step {
  index: number;
  kind: 'llm' | 'tool' | 'agent';
  name: string;
  model: string | null;
  tool: string | null;
  tool_call_id?: string;
  span_id: string;
  start_ns: number;
  duration_ns: number;
  status: 'ok' | 'error' | 'unset';
  request: unknown;
  response: unknown;
  fingerprint: string;
  tokens: { input: number | null; output: number | null; cache_read: number | null; context: number | null };
  cost_usd: number | null;
  layout: string;
}

export interface Tape {
  run: string;
  steps: Step[];
  truncated: boolean;
  spans_examined: number;
  resolved_partial?: boolean;
}

export interface Reconstruction {
  run: string;
  parent_run: string | null;
  outcome: Outcome;
  status: string;
  status_reason: string;
  model: string | null;
  model_calls: number;
  output: string | null;
  start_ns: number | null;
  end_ns: number | null;
  tool_calls: unknown[];
}

export interface TreeNode extends Reconstruction {
  depth: number;
  children: TreeNode[];
  children_truncated: boolean;
}

export interface Tree {
  root: TreeNode;
  run_count: number;
  truncated: boolean;
  truncated_by: string[];
}
