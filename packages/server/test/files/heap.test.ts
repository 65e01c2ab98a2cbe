import { constants, PerformanceObserver } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {
  FILE_STEP_BYTES,
  fileBytesMoved,
  nodeGiven,
  tuneHeapForFiles,
} from '../../src/computers/files/heap.js';

/** The young collections that started between two instants of `performance.now()`, as Node reports them. */
async function youngCollectionsDuring(run: () => void): Promise<number> {
  const starts: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)
        starts.push(entry.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
  const from = performance.now();
  run();
  const to = performance.now();
  // gc entries are delivered after the collection, on a later turn.
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return starts.filter((start) => start >= from && start <= to).length;
}

describe('the heap tuned for file traffic', () => {
  it("an operator's own growing factor is kept, from the command line or NODE_OPTIONS", () => {
    expect(nodeGiven('--heap-growing-percent', ['--heap-growing-percent=50'], '')).toBe(true);
    expect(
      nodeGiven('--heap-growing-percent', [], '--max-old-space-size=512 --heap-growing-percent=50'),
    ).toBe(true);
    expect(nodeGiven('--heap-growing-percent', ['--heap_growing_percent=50'], '')).toBe(true);
    expect(nodeGiven('--heap-growing-percent', ['--heap-growing-percentage=5'], '')).toBe(false);
    expect(nodeGiven('--heap-growing-percent', [], '')).toBe(false);
  });

  it('runs a young collection once a step of file bytes has moved, and none before; no global gc appears', async () => {
    const globalGc = (globalThis as { gc?: unknown }).gc;
    const tuning = tuneHeapForFiles([], '');
    expect(tuning).toEqual({ growingPercent: 'set', youngCollections: true });
    expect(tuneHeapForFiles(['--heap-growing-percent=50'], '')).toBe(tuning); // once per process
    expect((globalThis as { gc?: unknown }).gc).toBe(globalGc);

    // Whatever count an earlier test left is used up first.
    fileBytesMoved(FILE_STEP_BYTES);
    expect(await youngCollectionsDuring(() => fileBytesMoved(FILE_STEP_BYTES - 1))).toBe(0);
    expect(await youngCollectionsDuring(() => fileBytesMoved(1))).toBe(1);
    expect(await youngCollectionsDuring(() => fileBytesMoved(3 * FILE_STEP_BYTES))).toBe(1);
  });
});
