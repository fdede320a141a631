/**
 * tapedeck's public programmatic surface. IMPORTANT: exports added here are public.
 */
export { TapedeckSpanExporter, type TapedeckSpanExporterOptions } from './exporter/tapedeck-span-exporter.js';
export { startTapedeck, type RunningTapedeck, type StartOptions } from './server.js';
export { loadConfig, defaultConfig, ConfigError, type Config } from './config.js';
export type { SpanRecord, LogRecord, AttributeValue, Attributes } from './spans/span-record.js';
export type { Step, Tape, Message, ToolCall, Tokens, StepKind } from './normalize/step.js';
