/**
 * @module replay
 * Replay a recorded run with zero model calls: an OpenAI- and Anthropic-compatible proxy that
 * answers each model call with the next recorded model step.
 * IMPORTANT: exports added here are public.
 */
export { createReplayRoutes } from './routes.js';
export {
  defaultReplaySettings,
  type Principal,
  type ReplayDeps,
  type ReplayOwners,
  type ReplaySettings,
  type RegistryUsage,
  type UnreadableReason,
  type Upstream,
} from './settings.js';
export type { RefusalReason } from './errors.js';
export { readAnthropicRequest, readOpenAiRequest, type AgentRequest } from './request-shapes.js';
export { normalizeMessages } from './canonical-messages.js';
export { explainDifference, type Difference } from './explain.js';
