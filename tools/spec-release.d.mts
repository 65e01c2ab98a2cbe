/** The text of an empty spec/breaking-changes.yaml. */
export declare const EMPTY_ACCEPTED: string;
/** Writes spec/released/v1.json from the working tree and empties spec/breaking-changes.yaml. */
export declare function release(root: string): {
  version: string;
  cleared: { change: string; reason: string; operation?: string; where?: string }[];
};
