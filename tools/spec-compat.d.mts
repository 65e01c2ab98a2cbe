/** How a change is rated by docs/compatibility.md. */
export type ChangeClass = 'breaking' | 'additive' | 'deprecation';
/** Every kind of change and its class. */
export declare const POLICY: Readonly<Record<string, ChangeClass>>;

/** One classified difference, seen from one operation. */
export interface Change {
  kind: string;
  class: ChangeClass;
  /** `GET /path`, or `*` for the whole API. */
  operation: string;
  operationId?: string;
  /** Where in the operation (`response 200 body`, `query parameter limit`). */
  where: string;
  message: string;
  /** JSON pointer into the current bundle. */
  pointer: string;
}

/** Classifies every change from `base` to `current` (two bundled OpenAPI 3.1 documents). */
export declare function compareContracts(base: object, current: object): Change[];
/** Stable JSON text with sorted keys. */
export declare function canonical(value: unknown): string;
