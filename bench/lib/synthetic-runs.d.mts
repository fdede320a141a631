import type { SkipReason } from '../../src/runs/dataset.js';
import type { Queryable } from '../../src/store/database.js';

export declare const SHAPES: readonly [
  'complete',
  'complete',
  'complete',
  'complete',
  'complete',
  'no_input',
  'cancelled',
  'failure',
  'recent',
  'invalid',
  'truncated',
  'delta',
];
export type Shape = (typeof SHAPES)[number];
export declare const BASE_NS: bigint;
export declare function startOf(i: number): bigint;
export declare function expectedFate(shape: Shape): SkipReason | 'exported';
export declare function insertSyntheticRuns(
  db: Queryable,
  tenant: string,
  first: number,
  last: number,
  nowNs: bigint,
): Promise<void>;
