/** Transfers smaller than this show no progress: they are over before a line would be read. */
export const PROGRESS_MIN_BYTES = 1024 * 1024;

/** What a transfer reports as it goes. */
export interface TransferProgress {
  /** Bytes moved so far, and the total when known. */
  update(bytes: number, total: number | undefined): void;
  /** Erases the line. */
  done(): void;
  /**
   * Erases the line and says on stderr what moved, in how long and how fast (`svc: copied notes.txt:
   * 2.9 KiB in 0.1 s (29.3 KiB/s)`), on a terminal or not: for a transfer that has ended well.
   */
  report(): void;
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
 * Seconds for people: `0.4 s`, `12.3 s`, `2m 05s`.
 *
 * @example
 * humanDuration(125_000); // '2m 05s'
 */
export function humanDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

/**
 * A rate for people: `9.2 MiB/s`.
 *
 * @example
 * humanRate(3_000_000, 1000); // '2.9 MiB/s'
 */
export function humanRate(bytes: number, ms: number): string {
  return `${humanBytes(Math.round((bytes * 1000) / Math.max(ms, 1)))}/s`;
}

/**
 * A transfer's progress on stderr, redrawn in place at most every 100 ms: `name  12.0 MiB / 40.0 MiB
 * 30%  9.2 MiB/s` (bytes only when the total is unknown). Only on a terminal, and only once more than
 * {@link PROGRESS_MIN_BYTES} moved or are to move; elsewhere (a pipe, a log, CI) nothing until
 * {@link TransferProgress.report}.
 *
 * @example
 * const progress = transferProgress(process.stderr, process.stderr.isTTY === true, 'report.csv');
 * progress.update(2_000_000, 4_000_000);
 * progress.report();
 */
export function transferProgress(
  stderr: { write(text: string): unknown },
  tty: boolean,
  label: string,
  now: () => number = Date.now,
): TransferProgress {
  const started = now();
  let moved = 0;
  let drawn = false;
  let last = Number.NEGATIVE_INFINITY;
  const done = () => {
    if (drawn) stderr.write('\r\x1b[2K');
    drawn = false;
  };
  return {
    update(bytes, total) {
      moved = Math.max(moved, bytes);
      if (!tty || Math.max(bytes, total ?? 0) <= PROGRESS_MIN_BYTES) return;
      const at = now();
      if (at - last < 100 && bytes !== total) return;
      last = at;
      const of =
        total === undefined
          ? ''
          : ` / ${humanBytes(total)}  ${Math.floor((100 * bytes) / Math.max(total, 1))}%`;
      stderr.write(`\r\x1b[2K${label}  ${humanBytes(bytes)}${of}  ${humanRate(bytes, at - started)}`);
      drawn = true;
    },
    done,
    report() {
      done();
      const ms = now() - started;
      stderr.write(
        `svc: copied ${label}: ${humanBytes(moved)} in ${humanDuration(ms)} (${humanRate(moved, ms)})\n`,
      );
    },
  };
}
