// File traffic and V8's heap (decision 0018). A file moving through the server allocates a buffer for
// every piece of it: each HTTP body piece is copied into a new one, and every read of the Engine's
// socket gets one. They die at once, but V8 frees them only in a collection. Left alone, they piled
// up outside the heap until V8 ran a full mark-compact of the whole heap, every 10–15 MB moved, and
// the heap's limit, set again after each one from how busy the collector was, stayed too close to
// the heap's size for V8 to stop: about 40 % of the server's CPU went to collecting while a file moved.
//
// `tuneHeapForFiles` (called by `svc-server`, not by the library) changes two things:
// - every FILE_STEP_BYTES of file bytes moved, {@link fileBytesMoved} asks for a young collection,
//   which frees the dead buffers in about a millisecond;
// - V8's heap may grow to 4× what a full collection kept before the next one (about what V8 chose
//   itself when it did not fall into that loop), so that the room left under the limit is more than
//   the young generation, and a full collection is not started again at once.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The file bytes moved (all transfers together) between two young collections. */
export const FILE_STEP_BYTES = 8 * 1024 * 1024;
/** `--heap-growing-percent`: the old generation's limit becomes 4× what a full collection kept. */
const HEAP_GROWING_PERCENT = 300;

type Collect = (options: { type: 'minor' }) => void;

let collect: Collect | undefined;
let pending = 0;

/**
 * Whether Node was given this V8 option on its command line or in `NODE_OPTIONS` (an operator's
 * own setting, which {@link tuneHeapForFiles} keeps).
 *
 * @example
 * nodeGiven('--heap-growing-percent', ['--heap-growing-percent=50'], ''); // true
 */
export function nodeGiven(option: string, execArgv: readonly string[], nodeOptions: string): boolean {
  // V8 takes `_` for `-` in its options' names.
  const named = (arg: string) => arg.split('=')[0]?.replaceAll('_', '-') === option;
  return execArgv.some(named) || nodeOptions.split(/\s+/).some(named);
}

/** What {@link tuneHeapForFiles} did: whether it set the growing factor, and whether young collections run. */
export interface HeapTuning {
  /** `set` to {@link HEAP_GROWING_PERCENT}, or `kept` as the operator gave it. */
  growingPercent: 'set' | 'kept';
  youngCollections: boolean;
}

let tuning: HeapTuning | undefined;

/**
 * Tunes this process's V8 heap for file traffic, once (see the top of this file); a second call
 * answers what the first did. An operator's own `--heap-growing-percent` is kept; an exposed `gc`
 * (`node --expose-gc`) is used as it is. Otherwise the collector's function is taken from a new
 * context with V8's `--expose-gc` on for that moment (as Jest's leak detector does), so no global
 * `gc` appears.
 *
 * @example
 * if (config.files.heapTuning) logger.info(tuneHeapForFiles(), 'heap tuned for file traffic');
 */
export function tuneHeapForFiles(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): HeapTuning {
  if (tuning) return tuning;
  const kept = nodeGiven('--heap-growing-percent', execArgv, nodeOptions);
  if (!kept) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') collect = exposed as Collect;
  else {
    setFlagsFromString('--expose-gc');
    try {
      const found: unknown = runInNewContext('gc');
      if (typeof found === 'function') collect = found as Collect;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  tuning = { growingPercent: kept ? 'kept' : 'set', youngCollections: collect !== undefined };
  return tuning;
}

/**
 * Counts file bytes that went through the server (a body piece read, an Engine read passed on); past
 * {@link FILE_STEP_BYTES} since the last one, runs a young collection. Nothing until
 * {@link tuneHeapForFiles} ran.
 *
 * @example
 * source.on('data', (chunk) => fileBytesMoved(chunk.length));
 */
export function fileBytesMoved(bytes: number): void {
  if (!collect) return;
  pending += bytes;
  if (pending < FILE_STEP_BYTES) return;
  pending = 0;
  collect({ type: 'minor' });
}
