/** A place in the sources. `exact` is false when the pointer ran past them (the nearest node is given). */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
  exact: boolean;
}

/** Source positions of one spec tree: maps pointers into its bundle back to the file and line. */
export declare class SourceMap {
  constructor(rootFile: string);
  readonly rootFile: string;
  /** Where the bundle's `pointer` (or Spectral path) comes from; on the naming key unless `onKey: false`. */
  locate(pointer: string | readonly (string | number)[], options?: { onKey?: boolean }): SourceLocation;
}

/** RFC 6901 pointer (or path array) → unescaped segments. */
export declare function pointerSegments(pointer: string | readonly (string | number)[]): string[];
/** Segments → RFC 6901 pointer. */
export declare function toPointer(segments: readonly (string | number)[]): string;
