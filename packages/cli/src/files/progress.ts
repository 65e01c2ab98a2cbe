/** Transfers smaller than this show no progress: they are over before a line would be read. */
export const PROGRESS_MIN_BYTES = 1024 * 1024;

/** What a transfer reports as it goes. */
export interface TransferProgress {
  /** Bytes moved so far, and the total when known. */
  update(bytes: number, total: number | undefined): void;
  /** Erases the line. */
  done(): void;
}

const units = ['B', 'KiB', 'MiB', 'GiB'];

/**
 * Bytes for people: `512 B`, `1.5 MiB`.
 *
 * @example
 * humanBytes(1572864); // '1.5 MiB'
 */
export function humanBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * A transfer's progress on stderr, redrawn in place at most every 100 ms: `name  12.0 MiB / 40.0 MiB
 * 30%` (bytes only when the total is unknown). Only on a terminal, and only once more than
 * {@link PROGRESS_MIN_BYTES} moved or are to move; elsewhere (a pipe, a log, CI) nothing at all.
 *
 * @example
 * const progress = transferProgress(process.stderr, process.stderr.isTTY === true, 'report.csv');
 * progress.update(2_000_000, 4_000_000);
 * progress.done();
 */
export function transferProgress(
  stderr: { write(text: string): unknown },
  tty: boolean,
  label: string,
  now: () => number = Date.now,
): TransferProgress {
  if (!tty) return { update() {}, done() {} };
  let drawn = false;
  let last = Number.NEGATIVE_INFINITY;
  return {
    update(bytes, total) {
      if (Math.max(bytes, total ?? 0) <= PROGRESS_MIN_BYTES) return;
      const at = now();
      if (at - last < 100 && bytes !== total) return;
      last = at;
      const of =
        total === undefined
          ? ''
          : ` / ${humanBytes(total)}  ${Math.floor((100 * bytes) / Math.max(total, 1))}%`;
      stderr.write(`\r\x1b[2K${label}  ${humanBytes(bytes)}${of}`);
      drawn = true;
    },
    done() {
      if (drawn) stderr.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
