/**
 * @module testing
 * `tapedeck/testing`: replay a recorded run as a test (docs/cassettes.md). `replayCassette`
 * starts a replay of a cassette file on a free loopback port, with no database and no model,
 * and returns the base URLs to point an agent's OpenAI or Anthropic SDK at, and
 * `assertReplayed()`, which fails with the first mismatching path when the agent diverged
 * from the recording or did not consume every recorded model step.
 * IMPORTANT: exports added here are public.
 */
export { replayCassette, ReplayMismatch, type CassetteReplay, type ReplayCassetteOptions } from './replay-cassette.js';
