/** Types of stand-in-model.mjs, for the tests that start it. */
export interface StandInRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: the request body as the SDK sent it
  body: any;
}

export interface StandInModel {
  port: number;
  url: string;
  requests: StandInRequest[];
  readonly connections: number;
  close(): Promise<void>;
}

export function scriptedTurn(messages: unknown[]): { text?: string; toolCall?: { name: string; arguments: unknown } };
export function startStandInModel(port?: number): Promise<StandInModel>;
