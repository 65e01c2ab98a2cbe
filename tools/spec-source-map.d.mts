/** A place in the sources. `exact` is false when the pointer ran past them (the nearest node is given). */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
  exact: boolean;
  /** JSON pointer of the node inside `file` (of the `$ref` node when the pointer ended on a `$ref`). */
  pointer?: string;
  /** When the pointer ended on a `$ref`: where the node it names is written. */
  refersTo?: { file: string; line: number; column: number };
}

/** Source positions of one spec tree: maps pointers into its bundle back to the file and line. */
export declare class SourceMap {
  constructor(rootFile: string);
  readonly rootFile: string;
  /**
   * Where the bundle's `pointer` (or Spectral path) comes from; on the naming key unless `onKey: false`.
   * A pointer that ends on a `$ref` (not a `components` entry) is at that `$ref`'s key.
   */
  locate(pointer: string | readonly (string | number)[], options?: { onKey?: boolean }): SourceLocation;
  /** The `$ref`s, reachable from the root, that use the node at `pointer` in `file`, at their `$ref` keys. */
  referrers(file: string, pointer: string): SourceLocation[];
  /** The `$ref` key of the node at `pointer` in `file` when that node is a `$ref` (not an alias). */
  refKey(file: string, pointer: string): SourceLocation | undefined;
}

/** RFC 6901 pointer (or path array) → unescaped segments. */
export declare function pointerSegments(pointer: string | readonly (string | number)[]): string[];
/** Segments → RFC 6901 pointer. */
export declare function toPointer(segments: readonly (string | number)[]): string;
