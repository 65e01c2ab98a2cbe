import type { ChildProcess } from 'node:child_process';

/** A stream operation of the bundle, as the mock's front serves it. */
export interface MockStream {
  operationId: string;
  path: RegExp;
  examples: Record<string, { event: string; id: string; data: string; retry?: number }[]>;
  branches: { name: string; schema: Record<string, unknown> }[];
}
export declare function streamOperations(doc: Record<string, unknown>): MockStream[];
export declare function streamEvents(
  stream: MockStream,
  options?: { dynamic?: boolean; example?: string },
): { event: string; id: string; data: string; retry?: number }[];
export declare function formatEvent(event: {
  event: string;
  id: string;
  data: string;
  retry?: number;
}): string;
export declare function eventsAfter<T extends { id: string }>(
  events: T[],
  cursor: string | undefined | null,
): T[];
export declare function freePort(host?: string): Promise<number>;
export declare function startStreamFront(options: {
  document: Record<string, unknown> | (() => Record<string, unknown>);
  upstream: string | (() => string);
  served?: () => Record<string, unknown>;
  host?: string;
  port?: number;
  dynamic?: boolean;
}): Promise<{ url: string; pending(upstream: string): number; close(): Promise<void> }>;
export declare function startMock(options: {
  bundle: string;
  host?: string;
  port?: number;
  flags?: string[];
  stdio?: 'inherit' | 'pipe';
}): Promise<{ url: string; prismUrl: string; prism: ChildProcess; stop(): Promise<void> }>;
