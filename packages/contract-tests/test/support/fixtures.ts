import { randomUUID } from 'node:crypto';

/**
 * What earlier tests created and later ones use, by id as the target returned it. On the mock these are
 * the spec's example ids; on a server, the run's own resources (deleted again at the end).
 */
export const fx = {
  workspace: '',
  otherWorkspace: '',
  serviceAccount: '',
  key: '',
  member: '',
  computer: '',
  operation: '',
  /** A `computer.exec` operation (runComputer): its command's output is a stream. */
  execOperation: '',
  size: '',
  image: '',
  /** A terminal of `computer`, closed with exit code 3 (the terminals suite): its output is a stream. */
  terminal: '',
  /** A computer of a display image (the screens suite): its screen is a stream too; deleted at cleanup. */
  desk: '',
  /** A ready snapshot of `computer` (the snapshots suite). */
  snapshot: '',
};

/** A fresh Idempotency-Key: the create types require one, and a test that replays one picks its own. */
export const key = (): string => randomUUID();
